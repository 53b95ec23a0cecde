#!/usr/bin/env bash
# Install everything the tests need into .venv, then run the test suite (arguments go to pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup_env.sh all,dev
exec .venv/bin/python -m pytest "$@"
