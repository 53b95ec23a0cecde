"""An answer that names a clip with its letter and restates the question's own words: 'The first part (A) has less
loudness.' to 'Which part comes with less loudness?'.

Read only when it needs no understanding: every word of the claim is in the question, the claim keeps every word that
sets the question's direction (more, less, higher, not, ...), and the position agrees with the letter. A claim in
other words ('The first clip (A) is brighter.' to 'Which wins?') is left to the LLM judge.
"""
from __future__ import annotations

import re

from acousticbench.judge.cues import HEDGE, SECOND_THOUGHTS, mentions_letter
from acousticbench.judge.options import VALUE_WORDS, Terms, contradicts, words

_CLIP = (r"the\s+(?P<pos>first|second)\s+(?:audio\s+|sound\s+)?(?:clip|segment|part|sound|tone|recording|note|one|"
         r"sample|event|speaker)\s*(?:\((?P<paren>[AB])\)|,\s*(?:(?:which\s+is\s+)?(?:labell?ed|marked|identified|"
         r"described)\s+(?:as\s+)?)?[\"'‘“](?P<quoted>[AB])[\"'’”],?)")
NAMED_CLIP = re.compile(rf"\s*{_CLIP}\s+(?P<claim>[^,.;:!?\n]+?)"
                        r"(?=\s*(?:[,.;:!]|$|\b(?:as|because|since|due\s+to|which|while|indicating|than|compared)\b))",
                        re.IGNORECASE)
_OTHER_CLIP = re.compile(rf"\b(?:than|compared\s+to)\s+{_CLIP}", re.IGNORECASE)  # '... than the second segment, marked as 'B''
_QUESTION = re.compile(r"[^.?!]*\?|(?:^|(?<=[.!]\s))(?:identify|determine|judge|assess|decide|tell)\b[^.?!]*[.?!]",
                       re.IGNORECASE)
_DIRECTION = VALUE_WORDS | {"more", "less", "most", "least", "greater", "smaller", "fewer", "larger", "bigger",
                            "not", "no", "never", "stronger", "weaker", "heavier", "lighter", "sharper", "duller"}
_FILLER = {"is", "are", "was", "has", "have", "had", "sounds", "seems", "appears", "be", "to", "being", "the", "a",
           "an", "of", "in", "with", "it", "its", "that", "likely", "sound", "one", "clip"}
_SHORT = 400


def restated_choice(text: str, prompt: str, terms: Terms | None) -> tuple[int, int, str] | None:
    """(start, end, letter) of a clip named in the answer's first sentence whose claim restates the question."""
    m = NAMED_CLIP.match(text)
    if m is None or terms is None or len(text) > _SHORT:
        return None
    group = "paren" if m.group("paren") else "quoted"
    letter = m.group(group).upper()
    position = "first" if m.group("pos").lower() == "first" else "second"
    named_other = [o for o in _OTHER_CLIP.finditer(text) if _named_letter(o, terms) not in (None, letter)]
    rest = _OTHER_CLIP.sub(" ", text) if named_other else text
    if position not in terms[letter] or mentions_letter(rest, other_than=letter):
        return None  # 'the second clip (A)': the letter is not the clip's
    if any(_named_letter(o, terms) is None for o in _OTHER_CLIP.finditer(text)):
        return None  # 'than the second clip (A)': a letter that disagrees with its clip
    if HEDGE.search(text) or SECOND_THOUGHTS.search(text):
        return None
    questions = _QUESTION.findall(prompt.split("Only")[0])
    if len(questions) != 1:
        return None  # no one question to compare with
    asked, claim = set(words(questions[0])), set(words(m.group("claim")))
    content = claim - _FILLER
    if not content or not content <= asked or (asked & _DIRECTION) != (claim & _DIRECTION):
        return None
    if contradicts(letter, m.group("claim"), prompt):
        return None  # "'A' if the first is longer": 'The first segment, 'A', is shorter' names the clip, not the option
    return m.start(group), m.end(group), letter


def _named_letter(m: re.Match, terms: Terms) -> str | None:
    """The letter a clip name gives ('the second clip (B)'), or None when it is not that clip's letter."""
    letter = (m.group("paren") or m.group("quoted")).upper()
    return letter if m.group("pos").lower() in terms[letter] else None
