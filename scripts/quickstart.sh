#!/usr/bin/env bash
# From a fresh clone: install, build the open pack, verify it, and run two local models on one task.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup_env.sh all

py=.venv/bin/python
if [ ! -f archive/MANIFEST.json ]; then
  echo "Building the open AcousticBench pack into ./archive (about a minute)..."
  $py run.py --build-archive --archive archive
fi
$py run.py --verify-checksums --task all --archive archive
# one command, two models: each run prints its line, and a table closes the sweep
$py run.py --model Oracle,Random --task rad --max-samples 40 --seed 42
# the first minute ends with something to open: every answer above, its clips, tables and curves, in one file
$py run.py --report results --out report.html
