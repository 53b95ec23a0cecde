#!/usr/bin/env bash
# Install everything the tests need into .venv (torch's CPU build included), then run the suite (arguments go to pytest).
# The real-vLLM tests are their own stage (scripts/test_vllm.sh): this suite never starts vLLM.
# Usage: scripts/test.sh [--fast] [PYTEST ARGS]
#   --fast: the inner loop: the tests marked slow left out, and nothing installed once .venv exists (CI runs it all)
set -euo pipefail
cd "$(dirname "$0")/.."
marks="not vllm"
fast=0
if [ "${1:-}" = "--fast" ]; then
  shift
  marks="not vllm and not slow"
  fast=1
fi
if [ "$fast" = 0 ] || [ ! -x .venv/bin/python ]; then
  source scripts/setup_env.sh all,dev,hf-server
fi
exec .venv/bin/python -m pytest -m "$marks" "$@"
