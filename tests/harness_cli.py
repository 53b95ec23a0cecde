"""How the tests run the harness as a user does (run.py, scripts/, `python -m`/`-c`) in subprocesses whose environment
holds no provider key, endpoint or ACOUSTICBENCH_* setting from the developer's shell unless the test passes it."""
from __future__ import annotations

import json
import locale
import os
import select
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# variables a developer's shell may carry that must never leak into a test run (a key here can cost money)
PROVIDER_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL",
                      "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
FAST = {"ACOUSTICBENCH_RETRY_BASE_DELAY": "0", "ACOUSTICBENCH_CONNECT_WAIT": "2"}
# The harness's cache for the whole test run (conftest sets it), in every environment made here and in-process: not
# the developer's ~/.cache/acousticbench, which the suite would fill with a verified-files record per temporary pack,
# and whose judge verdicts a test must not read.
CACHE: dict[str, str] = {}


def is_provider_variable(name: str) -> bool:
    return name in PROVIDER_VARIABLES or name.startswith("ACOUSTICBENCH_")


def needs(*packages: str):
    """A mark that skips where a package is not installed, found without importing it: a module-level importorskip
    of torch would import it in every xdist worker's collection, for tests that mostly never touch it."""
    import importlib.util

    import pytest

    missing = [name for name in packages if importlib.util.find_spec(name) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any provider variable, plus the test run's cache and `extra`."""
    return {**{k: v for k, v in os.environ.items() if not is_provider_variable(k)}, **CACHE, **extra}


def harness_env(**extra: str) -> dict[str, str]:
    """The environment for a harness subprocess: clean, no backoff waits, short connect waits, plus `extra`."""
    return clean_env(**{**FAST, **extra})  # extra may set the waits itself


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    """`python run.py ARGS` in `cwd`; `env` defaults to harness_env()."""
    return _run([sys.executable, str(REPO / "run.py"), *args], cwd, harness_env() if env is None else env, timeout)


class _Forker:
    """One tests/forkrun.py server: a warm interpreter that forks each run (see there)."""

    def __init__(self):
        requests_r, self._requests = os.pipe()
        self._replies, replies_w = os.pipe()
        self.env = clean_env()
        self.process = subprocess.Popen([sys.executable, str(REPO / "tests" / "forkrun.py"), str(requests_r),
                                         str(replies_w)], pass_fds=(requests_r, replies_w), env=self.env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        os.close(requests_r)
        os.close(replies_w)
        self._buffer = b""
        self.ready: bool | None = None  # known at the first run: both servers import at once

    def _line(self, timeout: float) -> str | None:
        """The server's next reply line, or None when none came within `timeout` s ("": it is gone)."""
        while b"\n" not in self._buffer:
            if not select.select([self._replies], [], [], timeout)[0]:
                return None
            chunk = os.read(self._replies, 4096)
            if not chunk:
                return ""
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()

    def takes(self, env: dict[str, str]) -> bool:
        """Only a run whose interpreter settings (PYTHON*) are this server's can be forked from it."""
        if self.ready is None:
            self.ready = self._line(600) == "ready"  # it failed to start: every run goes to a subprocess
        python = {k: v for k, v in self.env.items() if k.startswith("PYTHON")}
        return self.ready and python == {k: v for k, v in env.items() if k.startswith("PYTHON")}

    def run(self, argv: list[str], cwd: Path | None, env: dict[str, str], timeout: float):
        with tempfile.TemporaryDirectory(prefix="forkrun-") as folder:
            out, err = os.path.join(folder, "stdout"), os.path.join(folder, "stderr")
            request = {"argv": argv[1:], "cwd": os.path.abspath(cwd or "."), "env": env, "stdout": out, "stderr": err}
            os.write(self._requests, (json.dumps(request) + "\n").encode())
            pid = int(self._line(60))
            timed_out = (code := self._line(timeout)) is None
            if timed_out:
                os.kill(pid, 9)
                code = self._line(60)
            code = int(code)
            stdout, stderr = (open(path, encoding=locale.getpreferredencoding(False)).read() for path in (out, err))
        if timed_out:
            raise subprocess.TimeoutExpired(argv, timeout, stdout, stderr)
        return subprocess.CompletedProcess(argv, code, stdout, stderr)


_forker: _Forker | None = None
_forking = threading.Lock()


def _run(argv: list[str], cwd: Path | None, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    """A harness run as `subprocess.run(argv, capture_output=True, text=True)` gives it, forked from a warm server
    where it can be (HARNESS_TESTS_SUBPROCESS=1: always a new interpreter)."""
    global _forker
    if os.environ.get("HARNESS_TESTS_SUBPROCESS") != "1":
        with _forking:
            _forker = _forker or _Forker()
            if _forker.takes(env):
                try:
                    return _forker.run(argv, cwd, env, timeout)
                except (OSError, TypeError, ValueError):  # the server is gone (a test ended every process of its)
                    _forker.ready = False
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout)


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
    return _run([sys.executable, str(path), *args], cwd, harness_env() if env is None else env, timeout)


def python(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess:
    """This interpreter with ARGS (`-c CODE`, `-m MODULE ...`, a script path); `env` defaults to harness_env()."""
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          env=harness_env() if env is None else env, timeout=timeout)


def run_dirs(results: Path) -> list[Path]:
    """The run folders under a results folder, sorted by name (beside them lie the sweep files, sweep-*.json); none
    where it does not exist."""
    results = Path(results)
    return sorted(p for p in results.iterdir() if p.is_dir()) if results.exists() else []


def files_of(root: Path) -> dict[str, bytes]:
    """Every file under `root` by its relative path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def rewrite_first_row(shard: Path, change) -> None:
    """Apply `change` to the first row of a parquet shard of an export, in place (an export altered by hand)."""
    import pyarrow.parquet as pq

    table = pq.read_table(shard)
    rows = table.to_pylist()
    change(rows[0])
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), shard)


def summary_rows(results: Path) -> list[dict]:
    """The rows of results/audioicl_summary.csv, whose header is the documented one."""
    import csv

    with (Path(results) / "audioicl_summary.csv").open() as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == ["model", "shots", "task", "accuracy", "accuracy_public", "n", "prompt_style",
                                     "scoring", "control", "variant"]
        return list(reader)


def assert_one_line(out: subprocess.CompletedProcess, code: int, *needles: str) -> None:
    """The user error contract: exit `code`, one line on stderr holding every needle, no traceback."""
    assert out.returncode == code, (out.returncode, out.stdout[-500:], out.stderr)
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    for needle in needles:
        assert needle in out.stderr, out.stderr


def marked_processes(mark: str, command_has: bytes = b"") -> list[int]:
    """Processes still running that inherited ACOUSTICBENCH_TEST_MARK=`mark` (a command started with it, its pool
    workers), those whose command line holds `command_has` only."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and command_has in (proc / "cmdline").read_bytes() \
                    and f"ACOUSTICBENCH_TEST_MARK={mark}".encode() in (proc / "environ").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found
