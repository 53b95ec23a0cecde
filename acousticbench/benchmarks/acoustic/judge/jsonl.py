"""The lines of a user's JSONL file (answers to judge, labelings to compare), each parsed, with its line number."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError


def jsonl_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line; a missing file, a line that is not UTF-8 (its byte
    named) or not JSON is a UserError naming the file and the line."""
    if not path.is_file():
        raise UserError(f"{path}: no such file.")
    for number, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise UserError(f"{path}:{number}: byte {err.start + 1} is not UTF-8: give a JSONL text file.") from None
        try:
            yield number, json.loads(line)
        except ValueError as err:
            raise UserError(f"{path}:{number}: not valid JSON ({err.msg}).") from None
