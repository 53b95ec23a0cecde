#!/usr/bin/env bash
# Makes the local base image of the CPU images (Tiny-Qwen2-Audio's transformers server, vLLM's CPU build) without any
# image registry: Debian's python3 with mmdebstrap (root), `docker import`ed, then PyTorch's CPU wheel installed on it
# (docker/torch-cpu/Dockerfile). Reuses what is already there under the same tag; prints the base's tag.
#   ./scripts/docker_base.sh    # DOCKER_HOST names the engine; the Debian tarball is cached in ~/.cache/acousticbench
# The CPU wheel comes from `pip download torch==VERSION` as this machine's pip is set up; where that finds only PyPI's
# CUDA build, point pip at PyTorch's CPU index: PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-$(pwd)/.venv/bin/python}
[ -x "$PY" ] || PY=python3
read -r BASE TORCH < <(PYTHONPATH=$(pwd) "$PY" -c \
  "from acousticbench.models.images import CPU_BASE, CPU_TORCH; print(CPU_BASE, CPU_TORCH)")
SUITE=bookworm  # its python3 is 3.11, the CPython of the wheel below
PYTHON_IMAGE=acousticbench/python:$SUITE
CACHE=${ACOUSTICBENCH_DOCKER_BASES:-$HOME/.cache/acousticbench/docker-bases}
export DOCKER_BUILDKIT=0  # the classic builder: it uses a local image a FROM names without asking a registry

say() { echo "== $*" >&2; }
have() { docker image inspect "$1" >/dev/null 2>&1; }

if ! have "$PYTHON_IMAGE"; then
  tarball=$CACHE/python-$SUITE.tar
  if [ ! -s "$tarball" ]; then
    command -v mmdebstrap >/dev/null || { echo "error: mmdebstrap is missing: apt-get install mmdebstrap" >&2; exit 2; }
    say "Debian $SUITE with python3 (mmdebstrap, about a minute)"
    mkdir -p "$CACHE"
    # the machine's extra CA certificates go in too: pip and apt inside builds may meet the same TLS proxy
    partial=$CACHE/python-$SUITE.partial.tar  # mmdebstrap picks its output format by the name's ending
    mmdebstrap --quiet --variant=minbase --include=python3,python3-venv,ca-certificates \
      --customize-hook='mkdir -p "$1/usr/local/share/ca-certificates"' \
      --customize-hook='copy-in /usr/local/share/ca-certificates/. /usr/local/share/ca-certificates/' \
      --customize-hook='chroot "$1" update-ca-certificates' \
      --customize-hook='chroot "$1" python3 -m venv /opt/venv' \
      "$SUITE" "$partial" > "$CACHE/mmdebstrap.log" 2>&1 || { cat "$CACHE/mmdebstrap.log" >&2; exit 1; }
    mv "$partial" "$tarball"
  fi
  say "importing $tarball as $PYTHON_IMAGE"
  # a venv on PATH: Debian's python3 refuses pip installs into the system (PEP 668)
  docker import --change 'ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV VIRTUAL_ENV=/opt/venv' "$tarball" "$PYTHON_IMAGE" >/dev/null
fi

if ! have "$BASE"; then
  context=$(mktemp -d)
  trap 'rm -rf "$context"' EXIT
  say "PyTorch $TORCH's CPU wheel"
  "$PY" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_28_x86_64 "torch==$TORCH" -d "$context" >&2
  if ! ls "$context"/torch-"$TORCH"+cpu-*.whl >/dev/null 2>&1; then
    echo "error: pip found $(ls "$context") for torch==$TORCH, not the CPU build: set" \
      "PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu and run this again" >&2
    exit 2
  fi
  cp docker/torch-cpu/Dockerfile "$context/"
  say "building $BASE"
  docker build --quiet --network host --build-arg PYTHON_IMAGE="$PYTHON_IMAGE" --build-arg TORCH_VERSION="$TORCH" \
    -t "$BASE" "$context" >/dev/null
fi
echo "$BASE"
