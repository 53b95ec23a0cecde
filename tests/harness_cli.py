"""How the tests run the harness as a user does (run.py, scripts/, `python -m`/`-c`) in subprocesses whose environment
holds no provider key, endpoint or ACOUSTICBENCH_* setting from the developer's shell unless the test passes it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# variables a developer's shell may carry that must never leak into a test run (a key here can cost money)
PROVIDER_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL",
                      "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
FAST = {"ACOUSTICBENCH_RETRY_BASE_DELAY": "0", "ACOUSTICBENCH_CONNECT_WAIT": "2"}


def is_provider_variable(name: str) -> bool:
    return name in PROVIDER_VARIABLES or name.startswith("ACOUSTICBENCH_")


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any provider variable, plus `extra`."""
    return {**{k: v for k, v in os.environ.items() if not is_provider_variable(k)}, **extra}


def harness_env(**extra: str) -> dict[str, str]:
    """The environment for a harness subprocess: clean, no backoff waits, short connect waits, plus `extra`."""
    return clean_env(**{**FAST, **extra})  # extra may set the waits itself


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    """`python run.py ARGS` in `cwd`; `env` defaults to harness_env()."""
    return subprocess.run([sys.executable, str(REPO / "run.py"), *args], cwd=cwd, capture_output=True, text=True,
                          env=harness_env() if env is None else env, timeout=timeout)


def start_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.Popen:
    """`python run.py ARGS` started in the background, its stdout and stderr piped as text."""
    return start_python(str(REPO / "run.py"), *args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True)


def start_python(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, **streams) -> subprocess.Popen:
    """This interpreter with ARGS started in the background (a server, a run to interrupt); `env` as in run_cli."""
    return subprocess.Popen([sys.executable, *args], cwd=cwd, env=harness_env() if env is None else env, **streams)


def script(name: str, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
           timeout: float = 300) -> subprocess.CompletedProcess:
    """`python scripts/NAME ARGS` (a .py under scripts/, or a path from the repo root such as bench/x.py)."""
    path = REPO / name if "/" in name else REPO / "scripts" / name
    return python(str(path), *args, cwd=cwd, env=env, timeout=timeout)


def python(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess:
    """This interpreter with ARGS (`-c CODE`, `-m MODULE ...`, a script path); `env` defaults to harness_env()."""
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          env=harness_env() if env is None else env, timeout=timeout)


def run_dirs(results: Path) -> list[Path]:
    """The run folders under a results folder, sorted by name (beside them lie the sweep files, sweep-*.json)."""
    return sorted(p for p in Path(results).iterdir() if p.is_dir())


def assert_one_line(out: subprocess.CompletedProcess, code: int, *needles: str) -> None:
    """The user error contract: exit `code`, one line on stderr holding every needle, no traceback."""
    assert out.returncode == code, (out.returncode, out.stdout[-500:], out.stderr)
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    for needle in needles:
        assert needle in out.stderr, out.stderr
