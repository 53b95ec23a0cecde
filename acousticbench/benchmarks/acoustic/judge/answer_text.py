"""The part of a raw response that is the answer: reasoning blocks removed, a tagged final answer preferred."""
from __future__ import annotations

import re

from acousticbench.benchmarks.acoustic.judge.letters import single_letter, states_letter

_REASONING = r"think|thinking|reasoning"
_CLOSED_BLOCK = re.compile(rf"<({_REASONING})>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
_CLOSE_TAG = re.compile(rf"</(?:{_REASONING})\s*>", re.IGNORECASE)
_OPEN_TAG = re.compile(rf"<(?:{_REASONING})>", re.IGNORECASE)
_ANSWER_TAG = r"answer|response|final_answer|final"
_TAGGED = re.compile(rf"<({_ANSWER_TAG})>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
# a tag missing a bracket or a slash: 'answer>A</answer>', '<answer>B</answer', '<answer>B/answer>', '<answer>A<answer>'
_LOOSE_TAGGED = re.compile(rf"(?:<|\b)({_ANSWER_TAG})>(.*?)(?:<\s*/?\s*\1\b\s*>?|/\1\s*>|$)", re.IGNORECASE | re.DOTALL)
# an opening tag missing its '>': '<answer B</answer>'
_OPEN_UNCLOSED = re.compile(rf"<({_ANSWER_TAG})[\s:：]+([^<>\n]{{1,40}}?)\s*</\1\s*>", re.IGNORECASE)
_COURTESY = re.compile(r"(?:^|(?<=[.!?\n]))[^.!?\n]*\b(?:let\s+me\s+know|feel\s+free|hope\s+(?:this|that|it)\s+helps|"
                       r"happy\s+to\s+help|(?:any|other|more|further)\s+questions)\b[^.!?\n]*[.!?]*\s*$", re.IGNORECASE)


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
    """The text to read an answer from: the last non-empty <answer>/<response> tag if any, else all that is not
    reasoning; closing courtesies ('Let me know if ...') dropped. A think block holding only a letter, with nothing
    after it, is that letter."""
    text = strip_reasoning(response)
    tagged = [m.group(2).strip() for m in _TAGGED.finditer(text) if m.group(2).strip()]
    if not tagged:
        tagged = [m.group(2).strip() for m in _OPEN_UNCLOSED.finditer(text)]
    if not tagged:
        tagged = [m.group(2).strip().lstrip(":：").strip() for m in _LOOSE_TAGGED.finditer(text)]
        tagged = [t for t in tagged if t]
    if tagged:
        return tagged[-1]
    if not text:
        blocks = [m.group(2) for m in _CLOSED_BLOCK.finditer(response)]
        return blocks[-1].strip() if blocks and single_letter(blocks[-1]) else ""
    return _without_courtesy(text)


def _without_courtesy(text: str) -> str:
    """The text without its closing courtesies, unless they name a letter ('... or tell me if you meant B')."""
    while (m := _COURTESY.search(text)) and m.start() > 0 and not states_letter(m.group()):
        text = text[:m.start()].rstrip()
    return text
