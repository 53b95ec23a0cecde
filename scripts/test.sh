#!/usr/bin/env bash
# Install everything the tests need into .venv (torch's CPU build included), then run the suite (arguments go to pytest).
# The real-vLLM tests are their own stage (scripts/test_vllm.sh): this suite never starts vLLM.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup_env.sh all,dev,hf-server
exec .venv/bin/python -m pytest -m "not vllm" "$@"
