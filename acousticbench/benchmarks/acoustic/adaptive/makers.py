"""Where an adaptive run's trials are made: in worker processes that every adaptive run of the command shares while
any of them goes (making a trial's clips is numpy work on short arrays that holds the GIL much of the time, so
threads of one process make them about one at a time), and in threads of this process until the first worker is up
(a short run makes its trials here alone), after a worker died, and where spawn would run the calling script's
unguarded top level again in each worker. A trial is the same bytes wherever it is made."""
from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path

from acousticbench.benchmarks.acoustic.adaptive.stimuli import TrialPlace, make_question
from acousticbench.benchmarks.acoustic.records import Question

Make = Callable[[Path, TrialPlace, "float | None"], Awaitable[Question]]
POOL_FROM = 100  # a run planning this many trials starts the workers (about a second to start, then one trial a CPU)


def _ready() -> None:
    """A worker's first task: nothing to do, but to unpickle it a worker imports this module, and with it the
    generators, before its first trial."""


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class _Shared:
    """The workers and how many runs use them; the first run starts them, the last one ends them."""

    executor: ProcessPoolExecutor | None = None
    started: list[Future] = []  # a task per worker: once one is done, a worker has imported the generators
    broken = False  # a worker died: the command's other trials are made here
    users = 0


def _start() -> None:
    from acousticbench.packs.workers import spawn_is_safe, started_executor

    workers = _cpus()
    if workers > 1 and spawn_is_safe():  # one CPU: a process would only take turns with this one
        _Shared.executor, _Shared.started = started_executor(workers, _ready)


def _end(now: bool) -> None:
    from acousticbench.packs.workers import ended_executor

    executor, _Shared.executor, _Shared.started = _Shared.executor, None, []
    if executor is not None:
        ended_executor(executor, now)


async def _in_workers(executor: ProcessPoolExecutor, root: Path, place: TrialPlace,
                     magnitude: float | None) -> Question:
    """The trial made by a worker. Not asyncio.wrap_future: a run cancelled (Ctrl-C) would cancel the executor's
    queued futures too, and a pool broken after that (its workers killed at once) fails on them in its own thread."""
    loop = asyncio.get_running_loop()
    waiting: asyncio.Future[Question] = loop.create_future()

    def settle(done: Future) -> None:  # on the executor's thread: hand the outcome to the loop
        def on_loop() -> None:
            if waiting.done():
                return
            if done.cancelled():
                waiting.cancel()
            elif done.exception() is not None:
                waiting.set_exception(done.exception())
            else:
                waiting.set_result(done.result())
        try:
            loop.call_soon_threadsafe(on_loop)
        except RuntimeError:  # the loop has closed: nobody waits for this trial any more
            pass

    executor.submit(make_question, root, place, magnitude).add_done_callback(settle)
    return await waiting


async def _make(root: Path, place: TrialPlace, magnitude: float | None) -> Question:
    executor = _Shared.executor
    if executor is not None and any(f.done() for f in _Shared.started):
        try:
            return await _in_workers(executor, root, place, magnitude)
        except BrokenProcessPool:  # a worker died (killed, out of memory): the rest are made here
            _Shared.executor, _Shared.broken = None, True
            executor.shutdown(wait=False, cancel_futures=True)
    return await asyncio.to_thread(make_question, root, place, magnitude)


@contextmanager
def trial_maker(planned: int) -> Iterator[Make]:
    """make(root, place, magnitude) -> the trial's Question, its clips written under `root` (make_question), for
    the span of one run's rounds; a run of `planned` trials at most."""
    if _Shared.users == 0:
        _Shared.broken = False
    if _Shared.executor is None and not _Shared.broken and planned >= POOL_FROM:
        _start()
    _Shared.users += 1
    interrupted = True
    try:
        yield _make
        interrupted = False
    finally:
        _Shared.users -= 1
        if _Shared.users == 0:
            _end(now=interrupted)
