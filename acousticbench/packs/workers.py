"""Build jobs over a pool of worker processes that an interrupt never outlives: Ctrl-C reaches only the builder, and
the workers are ended however the build ends."""
from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from typing import TypeVar

from acousticbench.core.errors import noted_signals, stop_if_signalled

J = TypeVar("J")
R = TypeVar("R")


def map_in_processes(fn: Callable[[J], R], jobs: list[J], workers: int) -> list[R]:
    """fn over jobs in `workers` spawned processes (spawn, not fork: the caller may hold threads that fork would copy
    half-done), results in job order. The workers start with SIGINT blocked (a signal mask survives exec), so a
    Ctrl-C (which the terminal sends to the whole process group) is one KeyboardInterrupt in this process, never a
    traceback from a worker; a Ctrl-C or SIGTERM while the pool starts waits until every worker has its start-up
    data (one cut short dies with EOFError); on any exit the workers are terminated and reaped."""
    from multiprocessing import resource_tracker

    # The pool's first semaphore starts the resource tracker, which ends by *unblocking* SIGINT in this thread
    # (CPython's ensure_running: pthread_sigmask(SIG_UNBLOCK, {SIGINT, SIGTERM})): workers started after it would
    # hear a Ctrl-C. Start it first.
    resource_tracker.ensure_running()
    stop_if_signalled()  # one that arrived while numpy.random was imported is lost otherwise until the pool is done
    pool = None
    with noted_signals(signal.SIGINT, signal.SIGTERM) as caught:
        before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # what the workers inherit
        try:
            pool = multiprocessing.get_context("spawn").Pool(workers)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
    try:
        if caught:
            signal.raise_signal(caught[0])  # now to the handler it was meant for: KeyboardInterrupt, or a SIGTERM's
        return pool.map(fn, jobs, chunksize=1)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
