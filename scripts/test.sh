#!/usr/bin/env bash
# Install everything the tests need into .venv (torch's CPU build included), then run the suite (arguments go to pytest).
# Usage: scripts/test.sh [--fast] [PYTEST ARGS]
#   --fast: the inner loop: the tests not marked slow, on every core (pytest-xdist), and nothing installed once .venv
#   holds the test extras; CI runs the full suite, one test at a time
set -euo pipefail
cd "$(dirname "$0")/.."
fast=()
if [ "${1:-}" = "--fast" ]; then
  shift
  fast=(-m "not slow" -n auto)
fi
if [ ${#fast[@]} -eq 0 ] || ! .venv/bin/python -c "import xdist" 2>/dev/null; then
  source scripts/setup_env.sh all,dev,hf-server
fi
exec .venv/bin/python -m pytest ${fast[@]+"${fast[@]}"} "$@"
