"""One pass over a run's responses.jsonl for every reading tool: its complete lines, a torn last line, the first
damaged line (the leaderboard leaves the run out), the first record that does not validate (the report leaves it out)
and a row per answer (what the results index stores, and what the leaderboard's statistics read)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Scan:
    """What one reading of responses.jsonl found. `rows`: (line, id, seed, status, label, outcome) of
    each line that is a JSON object, in file order (outcome 1/0 where the benchmark scores it, else None)."""

    lines: int  # complete lines (ended by b"\n")
    torn: bool  # the file ends in a line with no newline after it: what a kill leaves
    damaged: int | None  # the first complete line that is not a JSON object (blank ones included), or None
    invalid: str | None  # read_records' line naming the first record that does not validate, or None
    rows: list[tuple] = field(default_factory=list, repr=False)

    def scores(self) -> list[tuple[str, bool]]:
        """(id, right) of every scored line, in file order (duplicates included, as the file has them)."""
        return [(row[1], bool(row[5])) for row in self.rows if row[5] is not None]


def scan(path: Path, bench: Any) -> Scan:
    """Read `path` once, line by line (split at b"\n" alone: a reply's U+2028 is no line break); OSError where it
    cannot be read (the caller names the run). `bench`: the run's benchmark (its record type, outcome, label field)."""
    from pydantic import ValidationError

    from acousticbench.core.jsontext import parse_model

    lines, torn, damaged, bad_record, rows = 0, False, None, False, []
    with path.open("rb") as fh:
        for number, line in enumerate(fh, 1):
            complete = line.endswith(b"\n")
            lines, torn = lines + complete, not complete
            data = _object(line)
            if data is None:
                if complete and damaged is None:
                    damaged = number
            else:
                rows.append(_row(number, data, bench))
            if line.strip() and not bad_record:
                try:
                    parse_model(bench.record_type, line)
                except ValidationError:
                    bad_record = True
    return Scan(lines, torn, damaged, _invalid(path, bench) if bad_record else None, rows)


def _object(line: bytes) -> dict | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _row(number: int, data: dict, bench: Any) -> tuple:
    outcome, label = bench.outcome(data), data.get(bench.label_field)
    return (number, data.get("id"), data.get("seed"), data.get("status"), None if label is None else str(label),
            None if outcome is None else int(bool(outcome)))


def _invalid(path: Path, bench: Any) -> str | None:
    """The line the report's reader gives for the file (rare: read again only where a record failed to validate, so
    the words are exactly read_records', a torn last line excepted as it excepts it)."""
    from acousticbench.core.errors import UserError
    from acousticbench.run.results import read_records

    try:
        read_records(path, bench.record_type)
    except UserError as err:
        return str(err)
    return None
