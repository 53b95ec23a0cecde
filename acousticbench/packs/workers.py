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
    pool = None
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # Linux keeps a blocked signal pending
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
