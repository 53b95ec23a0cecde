#!/usr/bin/env bash
# Serve an open-weight model in Docker: ./scripts/docker_serve.sh NAME [--stop] [--list] [--dry-run] [--check] [--port P] [--gpus DEVICES] [--tp N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$root/.venv/bin/python"
[ -x "$python" ] || python="${PYTHON:-python3}"
exec "$python" -m acousticbench.serve "$@"
