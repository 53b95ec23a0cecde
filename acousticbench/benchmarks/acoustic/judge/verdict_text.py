"""A judge model's verdict as servers that do not enforce the JSON schema send it: in a ```json fence, after a byte
order mark or a sentence, with the label in another letter case or `refused` as a word. What it says is read; what
it does not say (no label) is still no verdict."""
from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.S | re.I)
_LABELS = {"a": "A", "b": "B", "none": "none", "null": "none", "neither": "none"}
_WORDS = {"true": True, "yes": True, "false": False, "no": False}


def lenient_verdict(content: Any) -> dict[str, Any] | None:
    """The verdict's fields from a reply that the strict schema refused, or None where it holds no readable verdict."""
    if not isinstance(content, str):
        return None
    text = content.strip().lstrip("\ufeff").strip()
    fenced = _FENCE.search(text)
    text = fenced.group(1) if fenced else text
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start:end + 1]) if 0 <= start < end else None
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    label = _LABELS.get(str(data.get("label")).strip().lower()) if data.get("label") is not None else "none"
    refused = data.get("refused", False)
    refused = _WORDS.get(refused.strip().lower()) if isinstance(refused, str) else refused
    if label is None or not isinstance(refused, bool) or "label" not in data:
        return None
    return {"label": label, "refused": refused, "reason": str(data.get("reason") or "")}
