"""Worker processes that an interrupt never outlives: Ctrl-C reaches only this process, and the workers are ended
however the work ends (a pack's build, an adaptive run's trials)."""
from __future__ import annotations

import multiprocessing
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from acousticbench.core.errors import noted_signals, stop_if_signalled

J = TypeVar("J")
R = TypeVar("R")


_GUARD = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", re.MULTILINE)


def spawn_is_safe() -> bool:
    """Whether a spawned worker may import this process's main module: spawn runs it again in every worker, so a
    script that calls the harness at its top level, unguarded, would run its whole work again in each (Python's
    "safe importing of the main module"). Safe: no main file (an interactive session, -c), a package's __main__
    (spawn skips it), or a file with an `if __name__ == "__main__":` block (run.py, an installed console script)."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None and (name == "__main__" or name.endswith(".__main__")):
        return True
    path = getattr(main, "__file__", None)
    if path is None:
        return True
    try:
        return bool(_GUARD.search(Path(path).read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


def _orphaned_exit(parent: int) -> None:
    """A worker's start: it ends itself once its parent is gone (killed outright, nothing shut it down)."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


@contextmanager
def _starting() -> Iterator[None]:
    """Around starting worker processes (spawn, not fork: the caller may hold threads that fork would copy
    half-done). They start with SIGINT blocked (a signal mask survives exec), so a Ctrl-C (which the terminal sends
    to the whole process group) is one KeyboardInterrupt in this process, never a traceback from a worker; a Ctrl-C
    or SIGTERM while they start waits until every worker has its start-up data (one cut short dies with EOFError),
    then reaches this process as it leaves the block (the caller ends the workers)."""
    from multiprocessing import resource_tracker

    # The first semaphore starts the resource tracker, which ends by *unblocking* SIGINT in this thread (CPython's
    # ensure_running: pthread_sigmask(SIG_UNBLOCK, {SIGINT, SIGTERM})): workers started after it would hear a
    # Ctrl-C. Start it first.
    resource_tracker.ensure_running()
    stop_if_signalled()  # one that arrived while numpy.random was imported is lost otherwise until the work is done
    with noted_signals(signal.SIGINT, signal.SIGTERM) as caught:
        before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # what the workers inherit
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
    if caught:
        signal.raise_signal(caught[0])  # now to the handler it was meant for: KeyboardInterrupt, or a SIGTERM's


def map_in_processes(fn: Callable[[J], R], jobs: list[J], workers: int) -> list[R]:
    """fn over jobs in `workers` processes, results in job order; on any exit the workers are terminated and
    reaped. Here, one after another, where a worker would run this process's unguarded main script again."""
    if not spawn_is_safe():
        return [fn(job) for job in jobs]
    pool = None
    try:
        with _starting():
            pool = multiprocessing.get_context("spawn").Pool(workers, _orphaned_exit, (os.getpid(),))
        return pool.map(fn, jobs, chunksize=1)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()


def started_executor(workers: int, warm_up: Callable[[], object]) -> tuple[ProcessPoolExecutor, list[Future]]:
    """An executor of `workers` processes, every one started now (each runs `warm_up` first, its future returned):
    none is started later by a submit, where a Ctrl-C would reach it. A worker that dies breaks the executor
    (BrokenProcessPool on every pending future); the caller shuts it down (ended_executor). The caller checks
    spawn_is_safe() first."""
    executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_orphaned_exit, initargs=(os.getpid(),))
    try:
        with _starting():
            started = [executor.submit(warm_up) for _ in range(workers)]  # each starts one more, up to `workers`
    except BaseException:
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    return executor, started


def ended_executor(executor: ProcessPoolExecutor, now: bool) -> None:
    """Shut an executor of started_executor down: after the trials under way, or `now` (an interrupted command,
    which a stopped or stuck worker must not hold up), its workers killed first."""
    if now:
        kill = getattr(executor, "terminate_workers", None)  # Python 3.14; before it, the executor's own table
        if kill is not None:
            kill()
        else:
            for process in list((getattr(executor, "_processes", None) or {}).values()):
                process.kill()
    executor.shutdown(wait=True, cancel_futures=True)
