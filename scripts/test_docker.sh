#!/usr/bin/env bash
# The Docker stage (after the SLURM stage): a real Docker engine from Debian's packages, started here without a bridge
# (host networking only, nothing but loopback used), local base images (mmdebstrap, no registry ever), and both tiny
# images served through `docker_serve.sh --host-network`: our transformers server and vLLM's CPU build. The harness runs
# against each (every question answered exactly once, the serving manifest naming the image), with --list, --check, a
# second start and --stop; on our server (seconds to start) also a container killed mid-run, restarted, and the run
# resumed with nothing lost or doubled, and a start right after --stop on the same port. Older image tags it made are
# pruned; the engine is stopped by its pid at the end, whatever happens. Skips with one line (exit 0) only where the
# engine cannot start here.
#   ./scripts/test_docker.sh    # images are kept in ACOUSTICBENCH_DOCKER_TEST_ROOT (~/.cache/acousticbench/docker-test)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
PY=${PYTHON:-$REPO/.venv/bin/python}
ROOT=${ACOUSTICBENCH_DOCKER_TEST_ROOT:-$HOME/.cache/acousticbench/docker-test}  # the engine's data: the image cache
RUN=/run/acousticbench-docker-test  # its sockets and state (short paths: a unix socket's is limited)
WORK=$(mktemp -d /tmp/acousticbench-docker-test.XXXXXX)
export DOCKER_HOST=unix://$RUN/docker.sock DOCKER_BUILDKIT=0 ACOUSTICBENCH_DOCKER_NETWORK=host
export ACOUSTICBENCH_CACHE_DIR=$WORK/cache ACOUSTICBENCH_RETRY_BASE_DELAY=0.2
export PYTHONPATH=$REPO${PYTHONPATH:+:$PYTHONPATH}
ENGINE=
STAGE=$SECONDS

say() { echo "== $* ($((SECONDS - STAGE)) s)" >&2; }
skip() { echo "Docker stage skipped: $*"; exit 0; }
stop_engine() {
  [ -n "$ENGINE" ] && kill -0 "$ENGINE" 2>/dev/null || return 0
  for serve in tiny_qwen2_audio tiny_qwen2_audio_vllm; do
    ./scripts/docker_serve.sh "$serve" --stop >/dev/null 2>&1 || true
  done
  kill "$ENGINE"  # dockerd stops its containers and its containerd on SIGTERM
  for _ in $(seq 1 100); do kill -0 "$ENGINE" 2>/dev/null || return 0; sleep 0.2; done
  kill -9 "$ENGINE"
}
cleanup() { stop_engine; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 1' INT TERM  # the cleanup runs on Ctrl-C or a kill too

[ "$(id -u)" = 0 ] || skip "the engine is started as root (run this stage as root)"
if ! command -v dockerd >/dev/null || ! command -v mmdebstrap >/dev/null; then
  say "installing docker.io and mmdebstrap from Debian"
  # a policy that starts no service while installing: the package's own engine would make a docker0 bridge
  guard=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && guard=1
  fi
  installed=0
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io \
      mmdebstrap; } > "$WORK/apt.log" 2>&1 && installed=1
  [ -z "$guard" ] || rm -f /usr/sbin/policy-rc.d
  [ $installed = 1 ] || { cat "$WORK/apt.log" >&2; exit 1; }
fi

say "starting the engine without a bridge"
mkdir -p "$ROOT" "$RUN"
dockerd --data-root "$ROOT" --exec-root "$RUN/exec" --pidfile "$RUN/dockerd.pid" -H "$DOCKER_HOST" --bridge=none \
  --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --storage-driver=overlay2 \
  > "$WORK/dockerd.log" 2>&1 &
ENGINE=$!
for _ in $(seq 1 150); do docker version >/dev/null 2>&1 && break; kill -0 $ENGINE 2>/dev/null || break; sleep 0.2; done
docker version >/dev/null 2>&1 || { ENGINE=; skip "the engine cannot start here ($(tail -1 "$WORK/dockerd.log"))"; }

say "local base images (Debian's packages and the CPU torch wheel)"
./scripts/docker_base.sh >/dev/null
"$PY" - "$WORK/archive" <<'EOF'
import sys
from pathlib import Path
from acousticbench.benchmarks.acoustic.pack.synthetic import write_noise_pack
write_noise_pack(Path(sys.argv[1]), "rad", 40)
EOF

image_of() { ./scripts/docker_serve.sh "$1" --dry-run | sed -n 's/^# image \([^:]*:[0-9a-f]*\):.*/\1/p'; }
shout() { cat "$@" >&2; exit 1; }  # shout FILES...: show what went wrong, fail
serve() { ./scripts/docker_serve.sh "$@" 2> "$WORK/serve.err" | grep '^export ' || shout "$WORK/serve.err"; }
harness() {  # harness MODEL RESULTS [run.py options]
  local model=$1 results=$2; shift 2
  "$PY" run.py --model "$model" --task rad --judge rules --archive "$WORK/archive" --results-dir "$results" "$@"
}
answers() { [[ $(cat "$1"/*/responses.jsonl 2>/dev/null | wc -l) -ge $2 ]] || ! kill -0 "$3" 2>/dev/null; }
wait_for() {  # wait_for SECONDS WHAT COMMAND...: until the command succeeds
  local limit=$1 what=$2; shift 2
  for _ in $(seq 1 $((limit * 5))); do "$@" && return 0; sleep 0.2; done
  echo "error: $what did not happen within $limit s" >&2; exit 1
}

# the container killed mid-run and the restart after --stop on our server, which starts in seconds (vLLM: a minute)
for row in tiny_qwen2_audio:Tiny-Qwen2-Audio:restarts tiny_qwen2_audio_vllm:Tiny-Qwen2-Audio-vLLM:once; do
  IFS=: read -r SERVE MODEL RESTARTS <<< "$row"
  IMAGE=$(image_of "$SERVE")
  say "$SERVE: building (first use) and serving $IMAGE on the host's network"
  endpoint=$(serve "$SERVE")  # not eval "$(...)", which would hide a failure
  eval "$endpoint"
  DIGEST=$(docker image inspect -f '{{.Id}}' "$IMAGE")
  for old in $(docker images --format '{{.Repository}}:{{.Tag}}' "${IMAGE%%:*}" | grep -vx "$IMAGE"); do
    docker rmi "$old" >/dev/null  # an older tag this stage made (its Dockerfile, pins or our code changed)
  done

  say "$SERVE: the harness against it"
  harness "$MODEL" "$WORK/$SERVE" > "$WORK/run.out" 2>&1 || { cat "$WORK/run.out" >&2; exit 1; }
  "$PY" scripts/check_replicas.py "$WORK/$SERVE" --expect 43 --container "$DIGEST"

  say "$SERVE: --list, --check, a second start"
  ./scripts/docker_serve.sh --list | grep -E "^$SERVE +.*running \(port [0-9]+\)" >/dev/null \
    || { ./scripts/docker_serve.sh --list >&2; exit 1; }
  ./scripts/docker_serve.sh "$SERVE" --check | grep -qx "ok: $SERVE can start here (no GPU (CPU))"
  serve "$SERVE" >/dev/null
  grep -q "is already running on 127.0.0.1:" "$WORK/serve.err" || { cat "$WORK/serve.err" >&2; exit 1; }

  if [ "$RESTARTS" = once ]; then
    ./scripts/docker_serve.sh "$SERVE" --stop >/dev/null
    continue
  fi

  say "$SERVE: its container killed mid-run, started again, the run resumed"
  harness "$MODEL" "$WORK/$SERVE-killed" --concurrency 2 > "$WORK/killed.out" 2>&1 &
  RUNNING=$!
  wait_for 300 "10 answers" answers "$WORK/$SERVE-killed" 10 $RUNNING
  docker kill "acousticbench-${SERVE//_/-}" >/dev/null
  wait $RUNNING || true  # it stops on a server that answers nothing, keeping every record it has
  kept=$(grep -vc '"status":"error"' "$WORK/$SERVE-killed"/*/responses.jsonl || true)  # final records, kept
  [ "$kept" -lt 43 ] || { echo "error: the run ended before its container was killed" >&2; exit 1; }
  serve "$SERVE" >/dev/null
  harness "$MODEL" "$WORK/$SERVE-killed" --resume > "$WORK/resume.out" 2>&1 || shout "$WORK"/{killed,resume}.out
  grep -q "$kept kept from the earlier run" "$WORK/resume.out" || shout "$WORK"/{killed,resume}.out
  "$PY" scripts/check_replicas.py "$WORK/$SERVE-killed" --expect 43 --container "$DIGEST"

  say "$SERVE: --stop, and a start right after it on the same port (its TIME-WAIT sockets do not count)"
  ./scripts/docker_serve.sh "$SERVE" --stop >/dev/null
  serve "$SERVE" >/dev/null
  ./scripts/docker_serve.sh "$SERVE" --stop >/dev/null
done

say "--check of a GPU model never pulls its probe image"
if ./scripts/docker_serve.sh voxtral_mini_3b --check > "$WORK/check.out"; then cat "$WORK/check.out" >&2; exit 1; fi
grep -q "^problem: probe image not available offline" "$WORK/check.out" || { cat "$WORK/check.out" >&2; exit 1; }
if grep -qiE "pull|registry-1" "$WORK/dockerd.log"; then
  echo "error: the engine was asked to pull:" >&2; grep -iE "pull|registry-1" "$WORK/dockerd.log" >&2; exit 1
fi
docker image prune -f >/dev/null  # the layers older tags left
say "Docker stage passed"
