"""Worker processes that an interrupt never outlives: Ctrl-C reaches only this process, and the workers are ended
however the work ends (a pack's build, an adaptive run's trials)."""
from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

from acousticbench.core.errors import noted_signals, stop_if_signalled

J = TypeVar("J")
R = TypeVar("R")


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
    reaped."""
    pool = None
    try:
        with _starting():
            pool = multiprocessing.get_context("spawn").Pool(workers)
        return pool.map(fn, jobs, chunksize=1)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()


def started_executor(workers: int, warm_up: Callable[[], object]) -> tuple[ProcessPoolExecutor, list[Future]]:
    """An executor of `workers` processes, every one started now (each runs `warm_up` first, its future returned):
    none is started later by a submit, where a Ctrl-C would reach it. A worker that dies breaks the executor
    (BrokenProcessPool on every pending future); the caller shuts it down."""
    executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        with _starting():
            started = [executor.submit(warm_up) for _ in range(workers)]  # each starts one more, up to `workers`
    except BaseException:
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    return executor, started
