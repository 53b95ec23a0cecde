#!/usr/bin/env bash
# Install everything the tests need into .venv (torch's CPU build included), then run the suite (arguments go to pytest).
# The real-vLLM tests are their own stage (scripts/test_vllm.sh): this suite never starts vLLM.
# Usage: scripts/test.sh [--fast] [PYTEST ARGS]
#   --fast: the inner loop: the tests not marked slow, and nothing installed once .venv holds the test extras.
# Both run on every core (pytest-xdist; the workers share one open pack build): most tests wait on subprocesses.
set -euo pipefail
cd "$(dirname "$0")/.."
marks="not vllm"
fast=0
if [ "${1:-}" = "--fast" ]; then
  shift
  marks="not vllm and not slow"
  fast=1
fi
if [ "$fast" = 0 ] || ! .venv/bin/python -c "import xdist, sklearn" 2>/dev/null; then
  source scripts/setup_env.sh all,dev,hf-server
fi
# The suite starts hundreds of interpreters (servers, builds, runs to interrupt): each compiles every harness module
# again unless bytecode is cached, so a shell's PYTHONDONTWRITEBYTECODE is not honoured here (__pycache__ is ignored).
unset PYTHONDONTWRITEBYTECODE
# --dist worksteal: an idle worker takes tests queued on the other, so the suite's few long tests do not leave one
# worker alone at the end
exec .venv/bin/python -m pytest -m "$marks" -n auto --dist worksteal "$@"
