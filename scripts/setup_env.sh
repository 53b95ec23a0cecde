# Sourced by quickstart.sh and test.sh: makes .venv (Python >= 3.10) and installs the given extras into it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

extras="$1"
python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "error: AcousticBench needs Python 3.10 or newer; set PYTHON=/path/to/python3.x" >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  echo "Creating .venv with $("$python" --version)"
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$extras]"
