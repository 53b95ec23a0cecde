#!/usr/bin/env bash
# Install everything the tests need into .venv (torch's CPU build included), then run the suite (arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup_env.sh all,dev,hf-server
exec .venv/bin/python -m pytest "$@"
