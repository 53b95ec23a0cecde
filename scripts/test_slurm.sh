#!/usr/bin/env bash
# The SLURM stage (after the vLLM stage): a real one-node SLURM (scripts/slurm_cluster.sh), Tiny-Qwen2-Audio-vLLM
# served as two replicas through `docker_serve.sh --slurm`, `--task rad` and an AudioICL cell run against the registry
# while one replica is scancelled mid-run (every question answered exactly once, both replicas used), a `--serve slurm`
# sweep of two models that leaves no job behind, and the harness as an sbatch job whose --time expires mid-run, then
# resumed (nothing lost or doubled); first, a replica job that dies before it registers is named at once, never
# waited on. The cluster's daemons are stopped by pid at the end, whatever happens.
#
# It needs: root (or SLURM and munge installed: slurmctld slurmd slurm-client munge, which slurm_cluster.sh installs
# with apt-get), the project's .venv (scripts/setup_env.sh), and real vLLM in .venv-vllm (scripts/setup_vllm.sh) unless
# ACOUSTICBENCH_SLURM_TEST_SERVER=ours. It says what is missing before it starts anything.
#
#   ./scripts/test_slurm.sh            # real vLLM from .venv-vllm (scripts/setup_vllm.sh)
#   ACOUSTICBENCH_SLURM_TEST_SERVER=ours ./scripts/test_slurm.sh   # servers of ours (tests/servers), in seconds
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
PY=${PYTHON:-$REPO/.venv/bin/python}
WORK=$(mktemp -d /tmp/acousticbench-slurm-test.XXXXXX)
export ACOUSTICBENCH_SLURM_DIR=$WORK/cluster ACOUSTICBENCH_CACHE_DIR=$WORK/cache ACOUSTICBENCH_RETRY_BASE_DELAY=0.2
export PYTHONPATH=$REPO${PYTHONPATH:+:$PYTHONPATH}
REGISTRY=$WORK/registry
MODEL=Tiny-Qwen2-Audio-vLLM SERVE=tiny_qwen2_audio_vllm
SERVER=()
if [[ ${ACOUSTICBENCH_SLURM_TEST_SERVER:-} == ours ]]; then  # the tiny model's id, a set latency per answer
  OURS="$PY $REPO/tests/servers/openai_server.py --port {port} --delay 0.05 --model-id acousticbench/tiny-qwen2-audio"
  SERVER=(--server-command "$OURS")
  export ACOUSTICBENCH_SLURM_SERVER_COMMAND=$OURS
fi

say() { echo "== $*" >&2; }

needs=()  # what the stage needs that this machine lacks: said at once, before any cluster or job
if ! command -v sbatch >/dev/null || ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null ||
    needs+=("SLURM and munge (apt-get install slurmctld slurmd slurm-client munge, as root)")
fi
"$PY" -c "import acousticbench, aiohttp, soundfile" 2>/dev/null ||
  needs+=("the project's environment at $PY (scripts/setup_env.sh, or PYTHON=...)")
if [[ ${ACOUSTICBENCH_SLURM_TEST_SERVER:-} != ours ]]; then
  VLLM_PY=${ACOUSTICBENCH_VLLM_VENV:-$REPO/.venv-vllm}/bin/python
  "$VLLM_PY" -c "import vllm" 2>/dev/null ||
    needs+=("real vLLM at $VLLM_PY (scripts/setup_vllm.sh), or ACOUSTICBENCH_SLURM_TEST_SERVER=ours")
fi
if (( ${#needs[@]} )); then
  for need in "${needs[@]}"; do echo "error: the SLURM stage needs $need" >&2; done
  exit 2
fi
cleanup() {
  squeue -h -o %A 2>/dev/null | xargs -r scancel 2>/dev/null || true
  ./scripts/slurm_cluster.sh stop >&2 || true
}
trap cleanup EXIT
trap 'exit 1' INT TERM  # the cleanup runs on Ctrl-C or a kill too

eval "$(./scripts/slurm_cluster.sh start | grep '^export ')"
say "building the packs"
cat > "$WORK/packs.py" <<'EOF'
import sys
from pathlib import Path
from acousticbench.benchmarks.acoustic.pack.synthetic import write_noise_pack
from acousticbench.benchmarks.audioicl.build import build_audioicl
if __name__ == "__main__":  # the AudioICL build's workers import this file again
    work = Path(sys.argv[1])
    write_noise_pack(work / "archive", "rad", 200)
    write_noise_pack(work / "long", "rad", 2500)  # longer than the one-minute limit, at any speed seen here
    build_audioicl(work / "icl", episodes_per_task=20, workers=2)
EOF
"$PY" "$WORK/packs.py" "$WORK"

submit() {  # submit ARGS...: the replicas' job id (the first line docker_serve.sh prints; all of it read, no SIGPIPE)
  ./scripts/docker_serve.sh "$SERVE" --slurm --registry "$REGISTRY" "${SERVER[@]}" "$@" > "$WORK/submit.out"
  head -1 "$WORK/submit.out"
}
registered() {  # registered N [JOB]: N replicas registered; a JOB that ended before is named with its logs, at once
  [[ $(ls "$REGISTRY/$SERVE"/*.json 2>/dev/null | wc -l) -ge $1 ]] && return 0
  if [[ -n ${2:-} && -z $(squeue -h -j "$2" -o %A 2>/dev/null) ]]; then
    echo "error: job $2 ended before $1 replica(s) registered in $REGISTRY/$SERVE; its logs end:" >&2
    tail -n 5 "$REGISTRY/$SERVE"/logs/"$2"_*.log >&2 2>/dev/null || true
    exit 1
  fi
  return 1
}
wait_for() {  # wait_for SECONDS WHAT COMMAND...: until the command succeeds
  local limit=$1 what=$2; shift 2
  for _ in $(seq 1 $((limit * 5))); do "$@" && return 0; sleep 0.2; done
  echo "error: $what did not happen within $limit s" >&2; exit 1
}
answers() { [[ $(cat "$1"/*/responses.jsonl 2>/dev/null | wc -l) -ge $2 ]] || ! kill -0 "$3" 2>/dev/null; }
no_job() { [[ -z $(squeue -h -o %A "$@" 2>/dev/null) ]]; }

say "a replica job that dies before it registers (a module missing from its environment) is named at once"
DEAD=$WORK/dead-registry
./scripts/docker_serve.sh "$SERVE" --slurm --registry "$DEAD" --replicas 2 \
  --server-command "$PY -c 'import no_such_module_here'" > "$WORK/dead.out"
STARTED=$SECONDS
ACOUSTICBENCH_REPLICA_WAIT=600 timeout 120 "$PY" run.py --model "$MODEL" --task rad --judge rules \
  --archive "$WORK/archive" --results-dir "$WORK/dead-results" --endpoints-from "$DEAD" > "$WORK/dead-run.out" 2>&1 &&
  { echo "error: a run against replicas that never came up succeeded" >&2; exit 1; }
grep -q "ended before its replica registered" "$WORK/dead-run.out" && grep -q "no_such_module_here\|did not come up" \
  "$WORK/dead-run.out" && (( SECONDS - STARTED < 100 )) || { cat "$WORK/dead-run.out" >&2; exit 1; }
wait_for 60 "the dead replicas gone" no_job

say "two replicas of $MODEL through docker_serve.sh --slurm"
JOB=$(submit --replicas 2)
wait_for 600 "two replicas registered" registered 2 "$JOB"

say "rad and an AudioICL cell against the registry; replica ${JOB}_0 cancelled mid-run"
"$PY" run.py --model "$MODEL" --task rad --judge rules --archive "$WORK/archive" --results-dir "$WORK/rad" \
  --endpoints-from "$REGISTRY" --concurrency 2 > "$WORK/rad.out" 2>&1 &
RAD=$!
"$PY" run.py --model "$MODEL" --task AudioRemap --shots 1 --archive "$WORK/icl" --results-dir "$WORK/icl-results" \
  --endpoints-from "$REGISTRY" --concurrency 2 > "$WORK/icl.out" 2>&1 &
ICL=$!
wait_for 600 "30 answers" answers "$WORK/rad" 30 $RAD  # or the harness ended (said below)
scancel "${JOB}_0"
wait $RAD || { cat "$WORK/rad.out" >&2; exit 1; }
wait $ICL || { cat "$WORK/icl.out" >&2; exit 1; }
"$PY" scripts/check_replicas.py "$WORK/rad" --expect 203 --ended 1 --used 2
"$PY" scripts/check_replicas.py "$WORK/icl-results"
./scripts/docker_serve.sh "$SERVE" --slurm --stop
wait_for 60 "the replicas gone" no_job

say "a --serve slurm sweep of two models leaves no job behind"
ACOUSTICBENCH_SLURM_REPLICAS=1 "$PY" run.py --model "$MODEL,Tiny-Qwen2-Audio" --task rad --judge rules \
  --archive "$WORK/archive" --results-dir "$WORK/sweep" --serve slurm --max-samples 40
"$PY" scripts/check_replicas.py "$WORK/sweep" --runs 2 --expect 40
wait_for 60 "no job left" no_job

say "the harness as an sbatch job with --time 1 (minute), expiring mid-run, then resumed"
JOB=$(submit --replicas 1)
wait_for 600 "one replica registered" registered 1 "$JOB"
HARNESS=$(sbatch --parsable --time=1 --output="$WORK/harness.out" --chdir="$REPO" --wrap \
  "exec $PY run.py --model $MODEL --task rad --judge rules --archive $WORK/long --results-dir $WORK/long-results \
   --endpoints-from $REGISTRY --concurrency 1")
wait_for 300 "the harness's time limit" no_job -j "$HARNESS"
grep -q "interrupted" "$WORK/harness.out" || { cat "$WORK/harness.out" >&2; exit 1; }
"$PY" run.py --model "$MODEL" --task rad --judge rules --archive "$WORK/long" --results-dir "$WORK/long-results" \
  --endpoints-from "$REGISTRY" --resume > "$WORK/resume.out" 2>&1 || { cat "$WORK/resume.out" >&2; exit 1; }
"$PY" scripts/check_replicas.py "$WORK/long-results" --resumed --expect 2503
./scripts/docker_serve.sh "$SERVE" --slurm --stop
say "SLURM stage passed"
