#!/usr/bin/env bash
# The open-weight path on a real NVIDIA GPU, with nothing downloaded: our transformers server runs Tiny-Qwen2-Audio on
# CUDA, the harness asks it 20 rad questions, greedy, twice, and the two runs must answer identically.
# Prints one summary line; exit 0 when it passed, 1 when not. Needs torch with CUDA and the [hf-server] extra.
# Usage: scripts/gpu_check.sh [ARCHIVE]   (default ./archive; the open pack is built there first if missing, ~1 min)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-$root/.venv/bin/python}"
[ -x "$py" ] || py=python3
archive="${1:-$root/archive}"
cd "$root"

# fail fast, in one line, where there is no GPU for torch to use
"$py" -c '
import sys
try:
    import torch
except ImportError:
    sys.exit("gpu_check: FAILED: torch is not installed (pip install torch, then pip install -e \".[hf-server]\")")
if not torch.cuda.is_available():
    sys.exit(f"gpu_check: FAILED: torch {torch.__version__} sees no NVIDIA GPU (torch.cuda.is_available() is False; "
             f"CUDA build: {torch.version.cuda})")
' || exit 1

export HF_HUB_OFFLINE=1 ACOUSTICBENCH_DEVICE=cuda  # nothing downloaded; the tiny model is built in code, on the GPU
if [ ! -f "$archive/MANIFEST.json" ]; then
  "$py" run.py --build-archive --archive "$archive" >/dev/null
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
started=$(date +%s)
for pass in first second; do
  if ! "$py" run.py --model Tiny-Qwen2-Audio --task rad --max-samples 20 --seed 42 --judge rules \
       --archive "$archive" --results-dir "$out/$pass" >"$out/$pass.log" 2>&1; then
    echo "gpu_check: FAILED: the $pass run did not finish: $(tail -n 1 "$out/$pass.log")"
    exit 1
  fi
done
"$py" - "$out" "$started" <<'PY'
import json, sys, time
from pathlib import Path

out, started = Path(sys.argv[1]), float(sys.argv[2])
runs = []
for name in ("first", "second"):
    (responses,) = (out / name).glob("*/responses.jsonl")
    runs.append([json.loads(line) for line in responses.read_text().splitlines()])
first, second = runs
gpu = __import__("torch").cuda.get_device_name(0)
same = [a["response"] for a in first] == [b["response"] for b in second]
errors = sum(r["status"] == "error" for r in first + second)
ok = same and errors == 0 and len(first) == 20
verdict = "passed" if ok else "FAILED"
print(f"gpu_check: {verdict}: Tiny-Qwen2-Audio on {gpu}, rad x{len(first)}, greedy twice: "
      f"{'identical' if same else 'DIFFERENT'} answers, {errors} errors, {time.time() - started:.0f} s")
sys.exit(0 if ok else 1)
PY
