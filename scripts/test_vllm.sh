#!/usr/bin/env bash
# The real-vLLM tests on their own: installs .venv (the harness) and .venv-vllm (real vLLM, scripts/setup_vllm.sh),
# then runs the tests marked vllm (arguments go to pytest). They share one vLLM server, started once.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup_env.sh all,dev,hf-server
bash scripts/setup_vllm.sh
exec .venv/bin/python -m pytest -m vllm tests/test_vllm.py "$@"
