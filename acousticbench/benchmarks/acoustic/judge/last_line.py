"""A letter alone on a line ('B', '**B**', 'Option B'), and whether the sentence before it agrees with it: after
'... so the second clip is louder.' a last line 'B' is the answer, after '... the first clip is louder.' it is not."""
from __future__ import annotations

import re

from acousticbench.benchmarks.acoustic.judge.compared import compared_clip
from acousticbench.benchmarks.acoustic.judge.cues import BOUNDARY, CLOSE, OPEN, mentions_letter
from acousticbench.benchmarks.acoustic.judge.letters import single_letter
from acousticbench.benchmarks.acoustic.judge.options import Terms, words, words_fit
from acousticbench.benchmarks.acoustic.judge.restated import restated_lead_in

_NAMED = re.compile(rf"^\s*{OPEN}*\s*(?:option|choice|answer)\s*{CLOSE}*\s*{OPEN}*(?P<letter>[AB])(?![A-Za-z0-9])"
                    rf"\s*{CLOSE}*\s*[.!]?\s*$", re.IGNORECASE)

_HEADING = re.compile(r"[:：][\W_]*$")


def line_letter(line: str) -> str | None:
    """'B', '**b.**', 'A A', 'Option B', '**Answer B**' -> the letter; any other word, both letters, or a heading
    ('**A:**' over what is said of A) -> None."""
    if _HEADING.search(line):
        return None
    letter = single_letter(line)
    if letter:
        return letter
    m = _NAMED.match(line)
    return m.group("letter").upper() if m else None


def fits_lead_in(before: str, letter: str, prompt: str, terms: Terms | None) -> bool:
    """A letter on its own line after prose: the sentence just before it must not describe the other option
    ('The second segment plays more gradually.' then 'A' contradicts itself). One that says the question's way of the
    letter's clip fits ('So the second clip is louder.' or 'The first clip is quieter.' then 'B', to 'Which is
    louder?'), and so does one that puts the question's words in it, value words and all ('... the second clip carries
    weaker sound intensity.' then 'B')."""
    pieces = [p for p in BOUNDARY.split(before) if p.strip()]
    if not pieces:
        return True
    last, asks = pieces[-1], before.rstrip().endswith("?")
    compared = None if asks else compared_clip(last, prompt, strict=False)
    if compared is not None:
        return compared == letter
    if mentions_letter(last, other_than=letter):
        return False
    return words_fit(letter, last, terms, short=len(words(last)) <= 8) or (
        not asks and restated_lead_in(last, prompt, letter, terms))
