#!/bin/bash
# The signal tests on a loaded machine: two CPU hogs beside `pytest -n 2`, RUNS times (default 20); prints each run's
# result and the count of clean runs. Usage: tests/stress_signals.sh [RUNS] [pytest args...]
set -u
cd "$(dirname "$0")/.."
runs=${1:-20}
shift $(( $# > 0 ? 1 : 0 ))
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python=${PYTHON:-.venv/bin/python}
files=(tests/test_signals.py tests/test_interrupts.py tests/test_faults4_signals.py)
logs=$(mktemp -d)
"$python" -c 'while 1: pass' & hog1=$!
"$python" -c 'while 1: pass' & hog2=$!
trap 'kill $hog1 $hog2 2>/dev/null' EXIT
clean=0
started=$(date +%s)
for i in $(seq 1 "$runs"); do
  t0=$(date +%s)
  if "$python" -m pytest "${files[@]}" -n 2 -p no:cacheprovider -q "$@" >"$logs/run-$i.txt" 2>&1; then
    clean=$((clean + 1))
    echo "run $i: clean ($(( $(date +%s) - t0 )) s)"
  else
    echo "run $i: FAILED ($(( $(date +%s) - t0 )) s): $logs/run-$i.txt"
    grep -E "^(FAILED|ERROR)" "$logs/run-$i.txt"
  fi
done
echo "$clean of $runs runs clean in $(( $(date +%s) - started )) s (logs in $logs)"
[ "$clean" -eq "$runs" ]
