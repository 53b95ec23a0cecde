"""Build jobs over a pool of worker processes that an interrupt never outlives: Ctrl-C reaches only the builder, and
the workers are ended however the build ends."""
from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from typing import TypeVar

J = TypeVar("J")
R = TypeVar("R")


def map_in_processes(fn: Callable[[J], R], jobs: list[J], workers: int) -> list[R]:
    """fn over jobs in `workers` spawned processes (spawn, not fork: the caller may hold threads that fork would copy
    half-done), results in job order. The workers start with SIGINT ignored, so a Ctrl-C (which the terminal sends
    to the whole process group) is one KeyboardInterrupt in this process, never a traceback from a worker, even
    when it lands while they start; on any exit they are terminated and reaped."""
    from multiprocessing import resource_tracker

    # The pool's first semaphore starts the resource tracker, and starting it *unblocks* SIGINT (CPython's
    # resource_tracker.ensure_running ends with pthread_sigmask(SIG_UNBLOCK, {SIGINT, SIGTERM})): inside the window
    # below, where SIGINT is ignored, that would discard a Ctrl-C instead of holding it. Start it first.
    resource_tracker.ensure_running()
    pool = None
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # Linux keeps a blocked signal pending
    if signal.SIGINT in signal.sigpending():  # ignoring a pending signal discards it: deliver it now instead
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited through exec, unlike a handler or the mask
    try:
        pool = multiprocessing.get_context("spawn").Pool(workers)
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, before)  # a Ctrl-C held meanwhile is raised here, inside the try
        return pool.map(fn, jobs, chunksize=1)
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        if pool is not None:
            pool.terminate()
            pool.join()
