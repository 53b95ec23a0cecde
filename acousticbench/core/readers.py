"""The one validating path for the JSON and JSONL files the harness reads besides the pack (references, run files,
caches): a damaged file is one UserError naming it, the line and the fix, never a traceback and never skipped."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from acousticbench.core.errors import UserError
from acousticbench.core.reporter import warn


@dataclass(frozen=True)
class TornLine:
    """The last line of a JSONL file that a crash cut short: where it is and the id it seems to carry."""

    path: Path
    lineno: int
    item_id: str | None

    def describe(self) -> str:
        who = f" (item {self.item_id})" if self.item_id else ""
        return f"{self.path}:{self.lineno}{who} was cut short by a crash"


def item_id_of(raw: bytes) -> str | None:
    """The "id" a damaged line seems to carry, so the message can name the question or episode."""
    found = re.search(rb'"id"\s*:\s*"([^"]{1,64})"', raw)
    return found.group(1).decode("utf-8", "replace") if found else None


def problem_of(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def _read_bytes(path: Path, what: str, fix: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{what} {path} not found: {fix}.") from None
    except OSError as err:
        raise UserError(f"cannot read {what} {path} ({err.strerror or err}): {fix}.") from None


def read_json(path: Path, what: str, fix: str, model: type[BaseModel] | None = None) -> Any:
    """A JSON object from `path` (checked against `model` when given, returned as the parsed dict)."""
    raw = _read_bytes(path, what, fix)
    try:
        data = json.loads(raw)
    except UnicodeDecodeError as err:
        raise UserError(f"{what} {path} is not UTF-8 (byte {err.start + 1}; the file is damaged): {fix}.") from None
    except ValueError as err:
        line = f" (line {err.lineno})" if isinstance(err, json.JSONDecodeError) else ""
        raise UserError(f"{what} {path} is not valid JSON{line}: {fix}.") from None
    if not isinstance(data, dict):
        raise UserError(f"{what} {path} is not a JSON object: {fix}.")
    if model is not None:
        try:
            model.model_validate(data)
        except ValidationError as err:
            raise UserError(f"{what} {path} is not what it should be ({problem_of(err)}): {fix}.") from None
    return data


def read_jsonl(path: Path, what: str, fix: str, model: type[BaseModel] | None = None,
               torn: list[TornLine] | None = None) -> list[dict]:
    """Every line of a JSONL file as a JSON object (checked against `model` when given). A last line cut by a crash
    is collected in `torn` when given (the caller says what becomes of it), else an error like any damaged line."""
    lines = _read_bytes(path, what, fix).split(b"\n")
    last = max((i for i, raw in enumerate(lines, 1) if raw.strip()), default=0)
    out = []
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            if model is not None:
                model.model_validate(data)
        except (ValueError, ValidationError) as err:
            cut = lineno == last and not raw.rstrip().endswith(b"}")
            if cut and torn is not None:
                torn.append(TornLine(path, lineno, item_id_of(raw)))
                continue
            why = "cut short by a crash" if cut else problem_of(err) if isinstance(err, ValidationError) else \
                "not UTF-8" if isinstance(err, UnicodeDecodeError) else "not a JSON object"
            who = f" (item {item_id_of(raw)})" if item_id_of(raw) else ""
            raise UserError(f"{what} {path}:{lineno}{who} is damaged ({why}): {fix}.") from None
        out.append(data)
    return out


def note_damaged_cache(path: Path, what: str, consequence: str) -> None:
    """A cache costs only time when damaged, so a run goes on; but it is said once, never skipped in silence."""
    warn(f"note: {path}: {what}; {consequence} (remove the file to silence this).")
