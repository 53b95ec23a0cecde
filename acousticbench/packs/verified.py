"""What the pre-run pack check already found true: each audio file that matched its pinned sha256, with its size,
mtime and inode at that moment. Like git's index, a file whose three are unchanged is not hashed again, so a sweep
or a --resume re-checks a pack in a few stat calls; any change to a file makes it hashed again. Kept under
$ACOUSTICBENCH_CACHE_DIR (default ~/.cache/acousticbench); `--verify-checksums` always hashes every file."""
from __future__ import annotations

import atexit
import hashlib
import json
import os
from pathlib import Path

from acousticbench.core.environment import cache_dir

Signature = tuple[int, int, int]  # size, mtime_ns, inode


def _signature(path: str) -> Signature | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def _file(root: str) -> Path:
    return cache_dir() / "verified" / f"{hashlib.sha256(root.encode()).hexdigest()[:24]}.json"


_LOADED: dict[str, dict[str, list]] = {}  # root -> its record, read once; what remember() adds is written at exit


def _key(root: str, promise: str) -> str:
    """A record per pack and clip format promised: a file that matched one promise is checked again for another."""
    real = os.path.realpath(root)
    return f"{real}\n{promise}" if promise else real


def _entries(root: str) -> dict[str, list]:
    if root not in _LOADED:
        try:
            data = json.loads(_file(root).read_bytes())
            _LOADED[root] = data if isinstance(data, dict) else {}
        except FileNotFoundError:
            _LOADED[root] = {}  # no record yet: everything is hashed
            return _LOADED[root]
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict):  # an unreadable record: everything is hashed, and that is said
            from acousticbench.core.readers import note_damaged_cache

            note_damaged_cache(_file(root), "not a record of verified files", "every clip is hashed again")
            _LOADED[root] = {}
    return _LOADED[root]


def known(root: str, paths: list[str], promise: str = "") -> dict[str, str]:
    """path -> the sha256 it matched when last hashed, for the paths unchanged since (the rest must be hashed)."""
    entries = _entries(_key(root, promise))
    found = {}
    for path in paths:
        entry = entries.get(path)
        if isinstance(entry, list) and len(entry) == 4 and tuple(entry[:3]) == _signature(path):
            found[path] = entry[3]
    return found


_DIRTY: set[str] = set()


def remember(root: str, digests: dict[str, str], promise: str = "") -> None:
    """Record files just found to match their pins (and `promise`, the clip format checked); written once, when the
    process ends (off the run's clock)."""
    if not digests:
        return
    real = _key(root, promise)
    entries = _entries(real)
    for path, digest in digests.items():
        signature = _signature(path)
        if signature is not None:
            entries[path] = [*signature, digest]
    if not _DIRTY:
        atexit.register(_flush)
    _DIRTY.add(real)


def _flush() -> None:
    """A record that cannot be written only costs hashing next time."""
    for real in sorted(_DIRTY):
        target = _file(real)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(_entries(real), separators=(",", ":"), allow_nan=False), encoding="utf-8")
            os.replace(tmp, target)
        except OSError:
            continue
    _DIRTY.clear()
