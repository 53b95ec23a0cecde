"""Python's cyclic garbage collector held off while `run.py` starts, and what it made frozen once the run begins.

Nearly everything a command makes before its first request lives to its end: modules, classes, pydantic's schemas,
the pack's questions. Every collection in that time walked all of it again and freed almost nothing: about 130
collections and 0.18 s of CPU in a one-task run of 2.5 s on this project's 2-core machine, 64-70 ms of it in one
full collection just before the first request. So the entry point holds the collector, and the run lets it go where
its requests are about to go (settled()): gc.freeze() puts what the start-up made in the permanent generation, which
no collection of the run walks. Every other command releases it where its own work begins. Nothing changes for a
program that calls acousticbench itself: only a hold() makes the other two do anything about it.
"""
from __future__ import annotations

import contextlib
import gc

_held = False


def hold() -> None:
    """From the entry point, before its imports: no cyclic collection until release()."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """The start-up is over: freeze what it made and collect as usual again (only after a hold(); once)."""
    if _let_go():
        gc.freeze()


def _let_go() -> bool:
    """End a hold(): the collector runs again. Whether there was one."""
    global _held
    held, _held = _held, False
    if held:
        gc.enable()
    return held


@contextlib.contextmanager
def settled():
    """While questions are out: what was loaded before (imports, the pack's questions and prompts) is frozen out of
    the cyclic garbage collector's passes, and its youngest generation is collected 10x less often. A 3,800-question
    run spent 0.45 s in the collector, most of it walking those objects again; now 0.1 s. A hold() ends here. A
    process that froze objects itself, or turned the collector off, is left as it is."""
    _let_go()
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(threshold[0] * 10, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
