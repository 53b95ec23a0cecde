"""How many requests in flight this process may have open at once: its open-files limit (`ulimit -n`), raised to its
hard limit where that helps, shared by every model session of the command."""
from __future__ import annotations

import os

_WANTED = 0  # connections asked for by every session this process opened (the limit is only ever raised)
_HELD = 0  # requests in flight the open sessions of this process may reach, all together
FILES_PER_REQUEST = 2  # its connection, and the clip file read for it
SPARE_FILES = 16  # beyond those open at the first session: logs, pipes, a judge's connection, the event loop's own
_BASE: int | None = None  # files this process had open when its first session began


def room_for_connections(n: int) -> int:
    """How many of `n` more requests in flight fit in this process's open-files limit, after raising its soft limit
    (up to the hard one) for them all: a sweep runs its models' sessions at once, each endpoint up to its ceiling,
    and the common soft limit of 1,024 would fail their requests with EMFILE ("Too many open files") instead. Where
    it cannot be raised (`ulimit -n 64`, a system's own cap), what fits is fewer, never less than 1; release them
    when the session ends."""
    global _WANTED, _HELD, _BASE
    try:
        import resource
    except ImportError:  # Windows
        return n
    _WANTED += n
    want = _WANTED * FILES_PER_REQUEST + 256  # and the files, pipes and the event loop's own descriptors
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY else min(want, hard),
                                                        hard))
        except (ValueError, OSError):  # macOS refuses a soft limit over its own per-process cap
            pass
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if _BASE is None:
        _BASE = _open_files()
    fit = n if soft == resource.RLIM_INFINITY else (soft - _BASE - SPARE_FILES) // FILES_PER_REQUEST - _HELD
    fit = max(1, min(n, fit))
    _HELD += fit
    return fit


def release_connections(n: int) -> None:
    global _HELD, _WANTED
    _HELD, _WANTED = max(0, _HELD - n), max(0, _WANTED - n)


def _open_files() -> int:
    """Files this process has open now (Linux's /proc; elsewhere a guess of the usual few dozen)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 32
