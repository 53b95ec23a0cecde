"""A warm interpreter that forks a run of run.py or a script per request, so a test pays for the process and not for
Python's start-up and the harness's imports again. The child is what a fresh `python SCRIPT ARGS` would be as far as a
test can see: its own pid, environment, working folder, stdin from /dev/null, stdout and stderr in files, exit code,
atexit handlers and thread shutdown; the parent imported modules only and never ran the harness. It leaves by
os._exit, so a crash in the interpreter's own finalization shows only with HARNESS_TESTS_SUBPROCESS=1. Each xdist
worker has its own server, with its own random hash seed; the comparisons with the shipped reference runs (made by
other processes) still catch an answer that depends on string hashing. Started as `python forkrun.py` by harness_cli."""
from __future__ import annotations

import json
import os
import sys

# what every run of the harness imports anyway, and the SDK backends' own (the slow part of most test runs)
WARM = ("acousticbench.cli", "acousticbench.api.commands", "acousticbench.run.sweep", "acousticbench.engine.executor",
        "acousticbench.benchmarks.acoustic.benchmark", "acousticbench.benchmarks.audioicl.benchmark",
        "acousticbench.models.openai_compat", "acousticbench.benchmarks.acoustic.metrics.psychometric", "aiohttp", "numpy",
        "soundfile", "httpx", "openai", "google.genai")


def _stdio(stdout: str, stderr: str) -> None:
    """fds 0-2 as a non-interactive process has them (stdin /dev/null, stdout block- and stderr line-buffered)."""
    import io

    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        opened = os.open(path, flags, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)))
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), errors="backslashreplace", line_buffering=True)
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr


def _child(request: dict, channels: tuple[int, int]) -> None:
    """Become `python ARGV` and never return."""
    import atexit
    import runpy
    import signal
    import tempfile
    import threading
    import time
    import traceback

    for fd in channels:
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _stdio(request["stdout"], request["stderr"])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # re-read from TMPDIR, as a new process would
    time.tzset()  # and the local time zone from TZ
    script = request["argv"][0]
    sys.argv = list(request["argv"])
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            code = exit_.code or 0
        else:
            print(exit_.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        code = -signal.SIGINT  # Python re-raises an unhandled Ctrl-C as the signal
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        threading._shutdown()  # what the interpreter does at exit: wait for non-daemon threads, then atexit
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        if code < 0:
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code & 0xFF)


def serve(requests_fd: int, replies_fd: int) -> None:
    """One request a line on `requests_fd`; on `replies_fd` the child's pid, then its exit code as subprocess gives
    it (negative: the signal that ended it)."""
    import importlib

    for module in WARM:
        importlib.import_module(module)
    requests = os.fdopen(requests_fd, "r")
    replies = os.fdopen(replies_fd, "w", buffering=1)
    replies.write("ready\n")
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request, (requests_fd, replies_fd))
        replies.write(f"{pid}\n")
        _, status = os.waitpid(pid, 0)
        replies.write(f"{os.waitstatus_to_exitcode(status)}\n")


if __name__ == "__main__":
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the repo, as run.py's own folder
    serve(int(sys.argv[1]), int(sys.argv[2]))
