"""A claim tied to its letter: 'The sound is from the front, as indicated by the letter 'A'.', 'The sound is bright (A).'

The letter follows a whole claim (a clause with a verb) that names the letter's option in the prompt's own words. A
letter that only names a clip ('The first clip, labeled 'A', is ...', 'The first clip (A) is ...') ties nothing: the
answer is then in the question's wording, which only the LLM judge reads.
"""
from __future__ import annotations

import re

from acousticbench.benchmarks.acoustic.judge.cues import HEDGE, NEGATION, SECOND_THOUGHTS, mentions_letter, sentence_at
from acousticbench.benchmarks.acoustic.judge.options import Terms, affirmed, contradicts, numbers_fit, sole_option, words, words_fit

_TIE = re.compile(
    r"(?i:(?:,\s*|\s+)(?:(?:as|which\s+is|and\s+is|so\s+it\s+is)\s+)?"
    r"(?:(?:indicated|denoted|represented|signified|shown|(?P<naming>marked|labell?ed|identified|designated)|classified)\s+"
    r"(?:by|as|with)\s+(?:the\s+)?(?:(?:use|presence)\s+of\s+(?:the\s+)?)?(?:audio\s+label\s+of\s+)?"
    r"(?:(?:letter|label|option|choice|term|answer|response)\s+)?|letter\s+))"
    r"(?:(?P<open>[\"'‘“*]+)(?P<letter>[AB])(?P<close>[\"'’”*]+)|(?P<bare>[AB])(?=\s*(?:[.,;!]|$)))"
    r"|\s+\((?P<paren>[AB])\)")
# the claim must be a clause ('the sound is from the front'), not a noun naming a clip ('the first clip')
_VERB = re.compile(r"\b(?:is|are|was|were|has|have|had|sounds?|plays?|occurs?|appears?|lasts?|comes?|seems?|repeats?|"
                   r"continues?|contains?|happens?|proceeds?|advances?|carries|feels?|gives?|heard|played|repeated|"
                   r"produced|performed)\b", re.IGNORECASE)
_CLIP_NAME = re.compile(r"\b(?:first|second)\s+(?:\w+\s+)?(?:clip|segment|part|sound|tone|recording|note|one|sample|"
                        r"event|speaker)\s*,?\s*(?:which\s+is\s+)?$", re.IGNORECASE)
_SHORT = 600  # a tie is read only in a short answer: in long reasoning a tied letter may be a step, not the answer


def tied_claims(text: str, prompt: str, terms: Terms | None) -> list[tuple[int, int, str, bool]]:
    """(start, end, letter, ok) for every letter tied to a claim; ok when nothing in its sentence casts doubt."""
    sole = sole_option(prompt) if terms is None else None
    if (terms is None and sole is None) or len(text) > _SHORT:
        return []  # without the prompt's option words the claim cannot be checked against the letter
    hits = []
    for m in _TIE.finditer(text):
        letter = (m.group("letter") or m.group("bare") or m.group("paren")).upper()
        start, end = sentence_at(text, m.start(), m.end())
        start += max(text.rfind(";", start, m.start()) - start + 1, 0)  # the claim is the clause the letter ends
        claim = text[start:m.start()]
        if len(words(claim)) < 3 or not _VERB.search(claim) or ((m.group("naming") or m.group("paren")) and _CLIP_NAME.search(claim)):
            continue  # 'The first clip, labeled 'A', ...', '... than the second clip, marked 'B'': a clip's name
        sentence = text[start:m.start()] + " " + text[m.end():end]
        if terms is None:
            hits.append((m.start(), m.end(), letter, _states_sole(letter, claim, sentence, sole, text[end:])))
            continue
        said = set(words(affirmed(sentence)))
        ok = (bool(said & terms[letter]) and words_fit(letter, affirmed(sentence), terms, short=False)
              and numbers_fit(letter, affirmed(sentence), terms) and not contradicts(letter, affirmed(sentence), prompt)
              and not HEDGE.search(sentence)
              and not mentions_letter(sentence, other_than=letter) and not SECOND_THOUGHTS.search(text[end:]))
        hits.append((m.start(), m.end(), letter, ok))
    return hits


def _states_sole(letter: str, claim: str, sentence: str, sole: tuple[str, frozenset[str]], after: str) -> bool:
    """Where the other letter is only 'otherwise', the claim must say every word of the letter's option, plainly
    ('The sound is within 3 meters, marked as 'A'.' to "'A' if it's within 3 meters, 'B' otherwise")."""
    return (letter == sole[0] and sole[1] <= set(words(claim)) and not NEGATION.search(sentence)
            and not HEDGE.search(sentence) and not mentions_letter(sentence, other_than=letter)
            and not SECOND_THOUGHTS.search(after))
