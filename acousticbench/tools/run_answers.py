"""The answers `acousticbench compare` reads of a run (id, seed, label, whether right): through the results index where
the run is a finished run folder at rest whose every line is a whole, valid record, else from its responses.jsonl as
read_records reads it (a file given on its own, a run unfinished or being written, a torn or damaged file: that reader
names what it finds, as ever). Either way later lines of an id replace earlier ones, in the place of its first."""
from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path
from typing import Any, NamedTuple

from acousticbench.core.errors import UserError
from acousticbench.run.results import CONFIG, METRICS, RESPONSES, being_written, read_records


class Answer(NamedTuple):
    """One question's (or episode's) answer of one run."""

    id: str
    seed: int
    label: str | None  # the benchmark's label field (Benchmark.label_field): the answer given
    right: bool | None  # the benchmark's outcome (Benchmark.outcome); None: not scored (a diagnostic question)


class RunAnswers:
    """Reads runs' answers, holding one results index open per results folder until closed."""

    def __init__(self) -> None:
        self._indexes: dict[Path, Any] = {}

    def __enter__(self) -> RunAnswers:
        return self

    def __exit__(self, *_: object) -> None:
        for index in self._indexes.values():
            index.close()
        self._indexes.clear()

    def read(self, file: Path, bench: Any, torn: list | None = None) -> tuple[list[Answer], tuple[str, str] | None]:
        """The run's answers in read_records' order, and the model and task its first record names (None: no
        record); a line a crash cut goes to `torn` (readers.TornLine), as read_records puts it."""
        found = self._indexed(file, bench)
        if found is not None:
            return found
        records = read_records(file, bench.record_type, torn)
        answers = [Answer(r.id, r.seed, getattr(r, bench.label_field), _right(bench.outcome(r.model_dump())))
                   for r in records]
        return answers, (records[0].model, records[0].task) if records else None

    def _indexed(self, file: Path, bench: Any) -> tuple[list[Answer], tuple[str, str] | None] | None:
        """The answers as the index holds them, or None where the file's own reader must read it."""
        from acousticbench.tools.results_index import ResultsIndex, change_key

        run_dir = file.parent
        if file.name != RESPONSES or not (run_dir / CONFIG).is_file() or not (run_dir / METRICS).is_file() \
                or being_written(run_dir):
            return None
        try:
            index = self._indexes.get(run_dir.parent) or self._indexes.setdefault(run_dir.parent,
                                                                                 ResultsIndex(run_dir.parent))
            files = index.run_files(run_dir)
            if files.torn or files.damaged is not None or files.invalid is not None:
                return None  # the file's reader names the torn line, or refuses the damaged one, in its words
            rows = index.answers(run_dir.name, change_key(run_dir))  # None: changed since, or read and not stored
            return None if rows is None else _answers(rows, file, bench)
        except (UserError, OSError, ValueError, StopIteration, sqlite3.Error):  # a file gone or changed: read it
            return None


def _answers(rows: list[tuple], file: Path, bench: Any) -> tuple[list[Answer], tuple[str, str] | None] | None:
    """The rows as read_records' records: the last line of each id, in the place of its first."""
    latest: dict[str, tuple[int, Answer]] = {}
    for line, item, seed, label, outcome in rows:
        if not isinstance(item, str) or not isinstance(seed, int):  # stored otherwise than validated: read the file
            return None
        latest[item] = (line, Answer(item, seed, label, _right(outcome)))
    if not latest:
        return [], None
    first = _record_at(file, bench, next(iter(latest.values()))[0])
    return [answer for _, answer in latest.values()], (first.model, first.task)


def _record_at(file: Path, bench: Any, line: int) -> Any:
    """The record on line `line` of the file (1-based), read up to it and no further."""
    from acousticbench.core.jsontext import parse_model

    with file.open("rb") as lines:
        return parse_model(bench.record_type, next(itertools.islice(lines, line - 1, line)))


def _right(outcome: Any) -> bool | None:
    return None if outcome is None else bool(outcome)
