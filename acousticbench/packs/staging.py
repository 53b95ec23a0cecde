"""Write a folder in full or not at all: build it beside its target and rename it into place when complete."""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def staged_folder(target: Path, verb: str = "building") -> Iterator[Path]:
    """Yield a hidden sibling folder of `target`; when the block finishes it replaces `target` (which may be absent
    or an empty folder), and on any failure or interrupt it is removed, so `target` is never half written."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.{verb}-", dir=target.parent))
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)  # mkdtemp makes it private; the result should be as readable as any new folder
    try:
        yield staging
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
