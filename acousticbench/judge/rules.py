"""The strict rules extractor: commits to A or B only when the text states the option unambiguously."""
from __future__ import annotations

import re

RULES_VERSION = "rules-1"

_BARE = re.compile(r"^[\s\W_]*([AaBb])[\s\W_]*$")
_STATED = re.compile(
    r"(?:\banswer\s*(?:is|:)\s*|\boption\s+|\bchoice\s*(?:is|:)\s*)[\s*\"'(\[]*([AB])\b(?![\w'])",
    re.IGNORECASE,
)


def extract_choice(text: str) -> str | None:
    """'A', 'b.', '**A**', '(B)', 'Answer: B', 'the answer is A' -> the letter; anything else -> None."""
    text = re.sub(r"<think>.*?</think>", " ", text, flags=re.DOTALL).strip()
    bare = _BARE.match(text)
    if bare:
        return bare.group(1).upper()
    stated = {m.group(1).upper() for m in _STATED.finditer(text)}
    if len(stated) == 1:
        return stated.pop()
    return None
