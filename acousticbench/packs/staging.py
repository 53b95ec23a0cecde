"""Write a folder in full or not at all: build it beside its target and rename it into place when complete."""
from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from acousticbench.core.errors import stop_if_signalled


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive, and not ours to judge
        return True
    return True


def remove_stale(target: Path, verb: str) -> list[Path]:
    """Remove the staging folders of `target` left by a build that was killed (its process is gone): a SIGKILL or a
    power cut leaves one that no handler could remove. Returns what was removed."""
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.{re.escape(verb)}-(\d+)-")
    removed = []
    for sibling in target.parent.iterdir() if target.parent.is_dir() else ():
        found = pattern.match(sibling.name)
        if found and sibling.is_dir() and not sibling.is_symlink() and not _alive(int(found.group(1))):
            shutil.rmtree(sibling, ignore_errors=True)
            removed.append(sibling)
    return removed


@contextmanager
def staged_folder(target: Path, verb: str = "building") -> Iterator[Path]:
    """Yield a hidden sibling folder of `target`; when the block finishes it replaces `target` (which may be absent
    or an empty folder), and on any failure or interrupt it is removed, so `target` is never half written. Its name
    carries the builder's pid, so a later build removes it when that process died before it could."""
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(target, verb)
    # named first and made inside the try: a Ctrl-C between making it and the try would leave it behind
    staging = target.parent / f".{target.name}.{verb}-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        staging.mkdir()  # as readable as any new folder (the umask's), as the result should be
        yield staging
        stop_if_signalled()  # a Ctrl-C whose exception a library swallowed: the result must not be put in place
        if target.is_dir():
            target.rmdir()  # callers allow only an empty folder here
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
