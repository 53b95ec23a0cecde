"""The part of a raw response that is the answer: reasoning blocks removed, a tagged final answer preferred."""
from __future__ import annotations

import re

_REASONING = r"think|thinking|reasoning"
_CLOSED_BLOCK = re.compile(rf"<({_REASONING})>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_CLOSE_TAG = re.compile(rf"</(?:{_REASONING})\s*>", re.IGNORECASE)
_OPEN_TAG = re.compile(rf"<(?:{_REASONING})>", re.IGNORECASE)
_ANSWER_TAG = r"answer|response|final_answer|final"
_TAGGED = re.compile(rf"<({_ANSWER_TAG})>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
_OPEN_ANSWER = re.compile(rf"<(?:{_ANSWER_TAG})>", re.IGNORECASE)


def strip_reasoning(response: str) -> str:
    """Remove <think> blocks; an unmatched </think> ends the reasoning, an unclosed <think> runs to the end."""
    text = _CLOSED_BLOCK.sub("\n", response)
    closes = list(_CLOSE_TAG.finditer(text))
    if closes:  # reasoning whose opening tag the server ate (MiMo, Step-Audio-R1)
        text = text[closes[-1].end():]
    opened = _OPEN_TAG.search(text)
    if opened:  # cut off while still reasoning: nothing after it is an answer
        text = text[:opened.start()]
    return text.strip()


def answer_text(response: str) -> str:
    """The text to read an answer from: the last non-empty <answer>/<response> tag if any, else all that is not reasoning."""
    text = strip_reasoning(response)
    tagged = [m.group(2).strip() for m in _TAGGED.finditer(text) if m.group(2).strip()]
    if tagged:
        return tagged[-1]
    opened = list(_OPEN_ANSWER.finditer(text))
    if opened and not _TAGGED.search(text):  # '<ANSWER>: A' with the closing tag never written
        return text[opened[-1].end():].strip().lstrip(":：").strip()
    return text
