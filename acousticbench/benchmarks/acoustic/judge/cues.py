"""What casts doubt on a commitment: hedges, negation, conditions, second thoughts, and naming the other letter."""
from __future__ import annotations

import re

OPEN = r"[\"'‘’“”`*_(\[<{]"
CLOSE = r"[\"'‘’“”`*_)\]>}]"
# Chinese cues are words of their own (no \b between Chinese characters): if, suppose, maybe, probably, guess, e.g.
_HEDGE_ZH = "如果|假如|假设|若是|要是|除非|可能|也许|或许|大概|不(?:太|很|是很)?确定|没(?:有)?把握|猜|例如|比如|要么|或者|两者|两个都|都很"
HEDGE = re.compile(r"\b(?:if|unless|whether|assum\w*|suppos\w*|maybe|perhaps|might|could|possibly|otherwise|"
                   rf"either|guess\w*|example|says|said|asks|instructs?|both)\b|{_HEDGE_ZH}", re.IGNORECASE)
NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|cannot|wrong|incorrect)\b|n['’]t\b|[不没非别]", re.IGNORECASE)
CONDITION = re.compile(r"\b(?:if|unless|when|whether|assuming|provided)\b|[?？]|如果|假如|假设|若是|要是|除非", re.IGNORECASE)
SECOND_THOUGHTS = re.compile(
    r"\b(?:wait|hmm+|actually|reconsider\w*|on\s+second\s+thought|alternatively|unsure|not\s+(?:sure|certain)|"
    r"let\s+me\s+(?:re\w*|double|check|think|verify|listen|analy\w*)|double[- ]check\w*|correction|scratch\s+that|"
    r"or\s+(?:maybe|perhaps|possibly)|(?:could|might)\s+also)\b"
    r"|[?？]|等等|等一下|不对|再想想|重新考虑|重新思考|也可能|不(?:太|很|是很)?确定|没(?:有)?把握|或者", re.IGNORECASE)
# where a sentence ends: not after a lone capital ('A. keyboard' is a label) and not inside '2.4'
BOUNDARY = re.compile(r"(?<![^A-Za-z0-9][A-Za-z])[.!?](?=\s|$)|\n")
_OTHER_LETTER = {k: re.compile(rf"(?<![A-Za-z0-9])(?:{k}|{OPEN}{k.lower()}{CLOSE}|{k.lower()}[.)])(?![A-Za-z0-9])")
                 for k in "AB"}
_EXCUSED = re.compile(r"\b(?:not|than|over|instead\s+of|vs\.?)\s*\W*$", re.IGNORECASE)


def mentions_letter(text: str, other_than: str | None = None) -> bool:
    """Does the text name a letter (any letter, or one other than `other_than`) other than as 'not B' or 'than B'?"""
    letters = "AB" if other_than is None else ("B" if other_than == "A" else "A")
    return any(not _EXCUSED.search(text[: m.start()]) for k in letters for m in _OTHER_LETTER[k].finditer(text))


def plain(label: str) -> bool:
    """A label with no hedge, negation or question in it."""
    return not (HEDGE.search(label) or NEGATION.search(label) or CONDITION.search(label))


def sentence_at(text: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the sentence that holds text[start:end]."""
    before = [b.end() for b in BOUNDARY.finditer(text, 0, start)]
    after = BOUNDARY.search(text, end)
    return (before[-1] if before else 0), (after.start() if after else len(text))
