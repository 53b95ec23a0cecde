#!/usr/bin/env bash
# Install everything the tests need into .venv (torch's CPU build included), then run the suite (arguments go to pytest).
# Usage: scripts/test.sh [--fast] [PYTEST ARGS]
#   --fast: the inner loop: the tests marked slow left out, and nothing installed once .venv exists (CI runs it all)
set -euo pipefail
cd "$(dirname "$0")/.."
fast=()
if [ "${1:-}" = "--fast" ]; then
  shift
  fast=(-m "not slow")
fi
if [ ${#fast[@]} -eq 0 ] || [ ! -x .venv/bin/python ]; then
  source scripts/setup_env.sh all,dev,hf-server
fi
exec .venv/bin/python -m pytest ${fast[@]+"${fast[@]}"} "$@"
