"""Values a benchmark works out from a run folder's files (AudioICL's counts for its summary CSV), kept as JSON in the
results index's SQLite file (the harness's cache; tools/results_index.py holds its other tables) under the files'
change key and the harness's version: worked out again only where one of the files changed. A cache: the folders stay
the truth, deleting it loses nothing, and where it cannot be opened every value is worked out from the files."""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

FOLDER = "results-index"  # under the harness's cache (core/environment.py: cache_dir)
BUSY_MS = 30_000  # another command writing the file: wait for it, never fail
_TABLE = """CREATE TABLE IF NOT EXISTS derived (folder TEXT NOT NULL, what TEXT NOT NULL, changed TEXT NOT NULL,
    value TEXT NOT NULL, PRIMARY KEY (folder, what)) WITHOUT ROWID"""


def index_path(results: Path | str) -> Path:
    """Where the index of a results folder lies: the cache's results-index/<sha256 of its real path, 24 digits>."""
    from acousticbench.core.environment import cache_dir

    where = os.path.realpath(results)
    return cache_dir() / FOLDER / f"{hashlib.sha256(where.encode()).hexdigest()[:24]}.sqlite"


def files_key(folder: Path, names: Sequence[str]) -> str:
    """Each file's inode, size and modification time: any write, append or atomic replace changes it."""
    parts = []
    for name in names:
        try:
            st = os.stat(folder / name)
            parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return "|".join(parts)


class DerivedValues:
    """The derived values of the run folders of one results folder, one connection held until closed."""

    def __init__(self, results: Path):
        self.db = _open(index_path(results))

    def __enter__(self) -> DerivedValues:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    def value(self, run_dir: Path, what: str, names: Sequence[str], work_out: Callable[[], Any],
              keep: Callable[[Any], bool] = lambda _: True) -> Any:
        """`what` of the run (JSON-able), as kept where its files `names` are as they were then, else `work_out()`,
        kept where `keep(value)` and the files did not change while it was worked out (a run being written)."""
        from acousticbench.core.version import __version__

        key = f"{files_key(run_dir, names)} {__version__}"  # another harness may count otherwise
        found = self._kept(run_dir.name, what, key)
        if found is not None:
            return json.loads(found)
        value = work_out()
        if keep(value) and f"{files_key(run_dir, names)} {__version__}" == key:
            self._keep(run_dir.name, what, key, json.dumps(value, allow_nan=False))
        return value

    def _kept(self, folder: str, what: str, key: str) -> str | None:
        if self.db is None:
            return None
        try:
            row = self.db.execute("SELECT value FROM derived WHERE folder = ? AND what = ? AND changed = ?",
                                  (folder, what, key)).fetchone()
        except sqlite3.Error:  # damaged since it was opened: worked out from the files
            return None
        return None if row is None else row[0]

    def _keep(self, folder: str, what: str, key: str, value: str) -> None:
        if self.db is None:
            return
        try:
            self.db.execute("INSERT OR REPLACE INTO derived VALUES (?, ?, ?, ?)", (folder, what, key, value))
        except sqlite3.Error:  # a full disk, a file turned read-only: kept next time, perhaps
            pass


def connect(where: str) -> sqlite3.Connection:
    """A connection to an index's file (or ":memory:") as every reader of it opens one: waits for another command
    writing it, write-ahead log, and no sync per commit (a cache: a power cut may lose its last rows, never the
    folders)."""
    db = sqlite3.connect(where, timeout=BUSY_MS / 1000, isolation_level=None)
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        if where != ":memory:":
            db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.Error:
        db.close()
        raise
    return db


def _open(path: Path) -> sqlite3.Connection | None:
    """The index's file, its table of derived values made where missing; None where it cannot be opened or written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = connect(str(path))
    except (sqlite3.Error, OSError):  # not writable, damaged (the results index builds it again): no cache
        return None
    try:
        db.execute(_TABLE)
        return db
    except sqlite3.Error:  # read-only: no cache
        db.close()
        return None
