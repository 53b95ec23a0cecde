"""The results index: a SQLite cache of what the tools read of each run folder of one results folder (in the harness's
cache, $ACOUSTICBENCH_CACHE_DIR/results-index/, named by the folder's real path: a reading tool writes nothing into a
results folder, and SQLite's write-ahead log needs a local disk): a row per run (its config.json and metrics.json as
read, how many records its responses.jsonl holds) and a row per answer (id, seed, status, label, outcome), filled once
per run and read again only when one of its files changes. The folders stay the truth: deleting the file loses
nothing, the next tool builds it again."""
from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from acousticbench.core.derived_values import connect, files_key, index_path  # noqa: F401 (index_path: the tools')
from acousticbench.run.results import CONFIG, METRICS, RESPONSES, being_written

SCHEMA = 4  # raised when the tables or what a row means change: an index of another schema is built again

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    folder TEXT PRIMARY KEY, changed TEXT NOT NULL, benchmark TEXT, model TEXT, task TEXT, cell TEXT, seed INTEGER,
    kind TEXT, control TEXT, lines INTEGER NOT NULL, torn INTEGER NOT NULL, damaged INTEGER, invalid TEXT,
    config BLOB NOT NULL, metrics BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    folder TEXT NOT NULL, line INTEGER NOT NULL, id TEXT, seed INTEGER, status TEXT, label TEXT, outcome INTEGER,
    PRIMARY KEY (folder, line)) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class RunFiles:
    """What the leaderboard reads of a finished run folder: config.json and metrics.json as bytes, and of its
    responses.jsonl what responses_scan.Scan says (complete lines, a torn last one, the first damaged line, the first
    record that does not validate); `scores` gives (id, right) of every scored line in file order, as core/stats.py
    reads them from the file (None: a benchmark this harness lacks, whose lines nobody reads)."""

    config: bytes
    metrics: bytes
    lines: int
    torn: bool
    damaged: int | None = None
    invalid: str | None = None
    scores: Callable[[], list[tuple[str, bool]]] | None = None


def change_key(run_dir: Path) -> str:
    """Each of the run's three files' inode, size and modification time: any write, append or replace changes it."""
    return files_key(run_dir, (CONFIG, METRICS, RESPONSES))


def read_files(run_dir: Path) -> RunFiles:
    """A run folder's files as they are now, without the index (a run being written is read so, every time), its
    responses.jsonl read once; a benchmark this harness lacks leaves its lines unread (the caller says so)."""
    from acousticbench.benchmarks import benchmark_of_config
    from acousticbench.core.errors import UserError
    from acousticbench.tools.responses_scan import scan

    config, metrics = (run_dir / CONFIG).read_bytes(), (run_dir / METRICS).read_bytes()
    try:
        bench = benchmark_of_config(json.loads(config.decode("utf-8")))
    except (UserError, ValueError):  # config.json unreadable or another harness's benchmark: said by the caller
        (run_dir / RESPONSES).open("rb").close()  # a missing one is named first, as for any run
        return RunFiles(config, metrics, 0, False)
    found = scan(run_dir / RESPONSES, bench)
    scores = found.scores()  # kept alone, not every row: a run read so is held until the command ends
    return RunFiles(config, metrics, found.lines, found.torn, found.damaged, found.invalid, lambda: scores)


class ResultsIndex:
    """The index of one results folder. Another process may read and update it at the same time (SQLite's WAL, one
    transaction per run); where the cache cannot be written the index lives in memory for this command only."""

    def __init__(self, results: Path):
        self.results = Path(results)
        self.path = index_path(self.results)
        self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return self._connect(str(self.path))
        except (sqlite3.OperationalError, OSError):  # a folder or file nobody may write: for this command only
            return self._connect(":memory:")
        except sqlite3.DatabaseError as err:  # damaged or not a database: a cache, so built again, and said once
            print(f"note: {self.path}: {err}; building the index again from the run folders.", file=sys.stderr)
        try:
            for suffix in ("", "-wal", "-shm"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            return self._connect(str(self.path))
        except (sqlite3.DatabaseError, OSError):
            return self._connect(":memory:")

    @staticmethod
    def _connect(where: str) -> sqlite3.Connection:
        from acousticbench.core.version import __version__

        db = connect(where)
        version = f"{SCHEMA} {__version__}"  # another harness may read answers otherwise: build again
        db.execute("BEGIN IMMEDIATE")
        try:
            found = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() \
                if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone() else None
            if found is None or found[0] != version:
                for table in ("meta", "runs", "answers"):
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in filter(str.strip, _TABLES.split(";")):
                    db.execute(statement)
                db.execute("INSERT INTO meta VALUES ('version', ?)", (version,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return db

    def close(self) -> None:
        self.db.close()

    def run_files(self, run_dir: Path) -> RunFiles:
        """The run's files as the index holds them, read again first where any changed since; a run being written
        is read from its folder and never stored (its rows would not be final)."""
        if being_written(run_dir):
            return read_files(run_dir)
        key = change_key(run_dir)  # taken before reading: a write during the read leaves a key that differs next time
        query = "SELECT changed, config, metrics, lines, torn, damaged, invalid FROM runs WHERE folder = ?"
        row = self.db.execute(query, (run_dir.name,)).fetchone()
        if row is None or row[0] != key:
            try:
                self._store(run_dir, key)
            except sqlite3.OperationalError:  # a full disk, a file turned read-only: the folder, read as it is
                return read_files(run_dir)
            row = self.db.execute(query, (run_dir.name,)).fetchone()
        return RunFiles(bytes(row[1]), bytes(row[2]), row[3], bool(row[4]), row[5], row[6],
                        scores=lambda: self.scores(run_dir.name))

    def _store(self, run_dir: Path, key: str) -> None:
        """Read a run's files once, its responses.jsonl line by line, and replace its rows in one transaction."""
        from acousticbench.benchmarks import benchmark_of_config, run_identity_of
        from acousticbench.tools.responses_scan import scan

        config_bytes, metrics = (run_dir / CONFIG).read_bytes(), (run_dir / METRICS).read_bytes()
        config = json.loads(config_bytes.decode("utf-8"))
        bench = benchmark_of_config(config)  # a benchmark this harness lacks: UserError, the caller says so
        run = run_identity_of(config)  # real, variant or control: for whoever queries the file
        found = scan(run_dir / RESPONSES, bench)
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute("DELETE FROM answers WHERE folder = ?", (run_dir.name,))
            self.db.executemany("INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?, ?)",
                                [(run_dir.name, *row) for row in found.rows])
            self.db.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (run_dir.name, key, bench.name, run.model, run.task, run.cell, run.seed, run.kind,
                             run.control, found.lines, int(found.torn), found.damaged, found.invalid, config_bytes,
                             metrics))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def scores(self, folder: str) -> list[tuple[str, bool]]:
        """(id, right) of every scored line of a run, in file order (duplicates included, as the file has them)."""
        return [(i, bool(o)) for i, o in self.db.execute(
            "SELECT id, outcome FROM answers WHERE folder = ? AND outcome IS NOT NULL ORDER BY line", (folder,))]

    def answers(self, folder: str, key: str) -> list[tuple] | None:
        """(line, id, seed, label, outcome) of every line of a run that is a JSON object, in file order, as stored
        under the change key `key`; None where the run's rows are not stored under it (changed since, or never)."""
        self.db.execute("BEGIN")  # one snapshot: the key and the rows of one store, never a half-replaced run
        try:
            if self.db.execute("SELECT 1 FROM runs WHERE folder = ? AND changed = ?", (folder, key)).fetchone() is None:
                return None
            return self.db.execute("SELECT line, id, seed, label, outcome FROM answers WHERE folder = ? ORDER BY line",
                                   (folder,)).fetchall()
        finally:
            self.db.execute("COMMIT")

    def forget_missing(self, present: set[str]) -> None:
        """Drop the rows of run folders no longer in the results folder (deleted or moved)."""
        gone = [name for (name,) in self.db.execute("SELECT folder FROM runs") if name not in present]
        if gone:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("DELETE FROM runs WHERE folder = ?", [(name,) for name in gone])
            self.db.executemany("DELETE FROM answers WHERE folder = ?", [(name,) for name in gone])
            self.db.execute("COMMIT")

