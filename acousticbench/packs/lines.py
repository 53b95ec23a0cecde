"""Reading a pack's JSONL files line by line, for every benchmark: a line that is not UTF-8 is an error naming the
file, the line and the item it seems to be, never a crash and never skipped in silence."""
from __future__ import annotations

import re
from pathlib import Path

from acousticbench.core.errors import ArchiveError

MANIFEST = "MANIFEST.json"  # every pack's description, at its top
REBUILD = "rebuild the pack or extract it again"


def text_lines(path: Path, what: str = "question", hint: str = REBUILD, undecodable: list | None = None):
    """(line number, text) of every non-blank line of a JSONL pack file. A line that is not UTF-8 is an
    UndecodableLine naming file, line and item; with `undecodable` it is collected there and the rest still read."""
    for lineno, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            yield lineno, decoded(raw, path, lineno, what, hint)
        except UndecodableLine as err:
            if undecodable is None:
                raise
            undecodable.append(err)


class UndecodableLine(ArchiveError):
    """A line of a pack file that is not UTF-8; `item_id` is the id it seems to carry, if any."""

    def __init__(self, message: str, item_id: str | None, reason: str, lineno: int):
        super().__init__(message)
        self.item_id, self.reason, self.lineno = item_id, reason, lineno


def decoded(raw: bytes, path: Path, lineno: int, what: str = "question", hint: str = REBUILD) -> str:
    """One line of a pack file as text; bytes that are not UTF-8 are an error naming the file, line and item."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        found = re.search(rb'"id"\s*:\s*"([^"]{1,64})"', raw)
        item_id = found.group(1).decode("ascii", "replace") if found else None
        who = f" ({what} {item_id})" if item_id else ""
        reason = f"line {lineno}: byte {err.start + 1} is not UTF-8 (the file is damaged)"
        raise UndecodableLine(f"{path}:{lineno}{who}: byte {err.start + 1} is not UTF-8 (the file is damaged); "
                              f"{hint}.", item_id, reason, lineno) from None
