"""JSON that holds any text a server can send: lone surrogates (invalid Unicode, from a `\\ud800` escape or bytes
that were not UTF-8) are written as `\\uXXXX` escapes, so a file stays UTF-8 and reads back exactly as it was sent;
so are the characters other than a newline that a reader splitting text into lines breaks a line at (U+2028...)."""
from __future__ import annotations

import json
import math
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# what JSON may leave as it is but str.splitlines() ends a line at: one record must stay one line to every reader
ESCAPED = re.compile("[\ud800-\udfff\u2028\u2029\x85]")
Model = TypeVar("Model", bound=BaseModel)


def _escaped(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text(data: Any, **dumps: Any) -> str:
    """json.dumps(data, ensure_ascii=False, **dumps), with every lone surrogate as its escape: only strings can hold
    one, so the escape lands inside a JSON string. A NaN or infinity (a server's, read by Python's lenient reader) is
    written null, as pydantic writes them: JSON has no word for either, and a file holding one is no JSON file."""
    try:
        text = json.dumps(data, ensure_ascii=False, **dumps, allow_nan=False)
    except ValueError:  # "Out of range float values are not JSON compliant"
        text = json.dumps(finite(data), ensure_ascii=False, **dumps, allow_nan=False)
    return ESCAPED.sub(_escaped, text)


def finite(data: Any) -> Any:
    """`data` with each NaN or infinite float as None, in dicts, lists and tuples at any depth."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: finite(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(value) for value in data]
    return data


def model_line(model: BaseModel) -> str:
    """A pydantic model as one compact JSON line (pydantic's own fast path; json_text where a string holds invalid
    Unicode, which pydantic cannot encode)."""
    try:
        line = model.model_dump_json()
    except ValueError:  # PydanticSerializationError: a lone surrogate (in a key, pydantic's python dump fails too)
        return json_text(model.model_dump(), separators=(",", ":"), default=str)
    return ESCAPED.sub(_escaped, line) if ESCAPED.search(line) else line


def parse_model(model: type[Model], line: bytes | str) -> Model:
    """A JSON line as `model` (pydantic's fast path; the standard library's reader for a line whose strings hold
    escaped lone surrogates, which pydantic's reader refuses). Raises ValidationError as pydantic does."""
    try:
        return model.model_validate_json(line)
    except ValidationError as err:
        if not any(e["type"] == "json_invalid" for e in err.errors()) or b"\\u" not in _bytes(line):
            raise
        try:
            data = json.loads(line)
        except ValueError:
            raise err from None
        return model.model_validate(data)


def _bytes(line: bytes | str) -> bytes:
    return line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")


def sendable(text: str) -> str:
    """The text with each lone surrogate as U+FFFD: what can go in a request or on a page, which must be UTF-8."""
    return LONE_SURROGATE.sub("\ufffd", text)
