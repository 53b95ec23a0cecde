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

pip_log=$(mktemp)
pip_install() {  # quiet unless it fails; then the whole pip log
  if ! .venv/bin/python -m pip install --disable-pip-version-check "$@" >"$pip_log" 2>&1; then
    cat "$pip_log" >&2
    echo "error: pip install $* failed (log above)" >&2
    exit 1
  fi
}
echo "Installing into .venv: .[$extras]"
pip_install --upgrade pip
if [[ ",$extras," == *",hf-server,"* ]]; then
  # torch first, so transformers and peft take no other. From PyPI on an ordinary Linux machine this is the CUDA build
  # (GBs of NVIDIA libraries); for a CPU-only one set PIP_INDEX_URL=https://download.pytorch.org/whl/cpu. Where a
  # CPU wheel of 2.13.0 sits in a local package index (as on this project's test machines), pip takes that one.
  pip_install torch==2.13.0
fi
pip_install -e ".[$extras]"
rm -f "$pip_log"

# espeak-ng speaks the cascade test's clips (the AudioICL digits ship as files; only
# scripts/make_spoken_digits.py needs it); sox converts audio. Debian packages,
# installed only when missing and when this shell may (root with apt-get); otherwise the tests that need them skip.
if ! command -v espeak-ng >/dev/null || ! command -v sox >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "Installing espeak-ng and sox (apt-get)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq espeak-ng sox >/dev/null
  else
    echo "note: espeak-ng or sox is missing; install them (apt-get install espeak-ng sox) for the speech tests" >&2
  fi
fi

# chromium (Debian's) is the browser the report's tests open it in, driven by playwright without a browser download;
# installed with the [dev] extra only (a quickstart needs no browser), when missing and when this shell may.
if [[ ",$extras," == *",dev,"* ]] && ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "Installing chromium (apt-get)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "note: chromium is missing; install it (apt-get install chromium) for the report's browser tests" >&2
  fi
fi
