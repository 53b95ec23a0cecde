"""An answer that names a clip with its letter and restates the question's own words: 'The first part (A) has less
loudness.' to 'Which part comes with less loudness?', 'The sound of bass is in the first clip, labeled as 'A'.' to
'Which clip is the sound of bass?'; or restates the letter's own option ('The first segment, 'A', is longer.' to
''A' if the first is longer').

Read only when it needs no understanding: every word of the claim is in the question (or the option), the claim keeps
every word that sets the direction (more, less, higher, not, ...), and the position agrees with the letter. A
comparative counts as 'more' and its word ('closer' is 'more close'). A claim in other words ('The first clip (A) is
brighter.' to 'Which wins?') is left to the LLM judge.
"""
from __future__ import annotations

import re
from functools import lru_cache

from acousticbench.benchmarks.acoustic.judge.cues import HEDGE, SECOND_THOUGHTS, mentions_letter
from acousticbench.benchmarks.acoustic.judge.options import VALUE_WORDS, Terms, contradicts, described, words

_CLIP = (r"the\s+(?P<pos>first|second)\s+(?:audio\s+|sound\s+)?(?:clip|segment|part|sound|tone|recording|note|one|"
         r"sample|event|speaker)\s*(?:\((?P<paren>[AB])\)|,\s*(?:(?:which\s+is\s+)?(?:labell?ed|marked|identified|"
         r"described)\s+(?:as\s+)?)?[\"'‘“](?P<quoted>[AB])[\"'’”],?)")
NAMED_CLIP = re.compile(rf"\s*{_CLIP}\s+(?P<claim>[^,.;:!?\n]+?)"
                        r"(?=\s*(?:[,.;:!]|$|\b(?:as|because|since|due\s+to|which|while|indicating|than|compared)\b))",
                        re.IGNORECASE)
# the whole answer: '<the question's words> is in the second clip, labeled as 'B'.', '... is in clip 'A'.',
# '... is indicated by the letter 'A'.'
_LOCATED = re.compile(
    r"\s*(?P<claim>[^,.;:!?\n'\"]+?)\s+(?:is|are)\s+(?:(?:in|from)\s+(?:the\s+(?P<pos>first|second)\s+(?:audio\s+|sound\s+)?"
    r"(?:clip|segment|part|recording)\s*,?\s*(?:(?:which\s+is\s+)?(?:labell?ed|marked|identified|indicated)\s+(?:(?:as|by|with)\s+)?"
    r"(?:the\s+)?(?:letter\s+)?)?|clip\s+)|(?:indicated|denoted|represented)\s+by\s+(?:the\s+)?(?:letter\s+)?)"
    r"[\"'‘“](?P<letter>[AB])[\"'’”]\s*[.!]?\s*$", re.IGNORECASE)
# the sentence before a letter alone on the last line: 'Therefore, the second clip carries weaker sound intensity.'
_LEAD_IN = re.compile(r"\s*(?:(?:so|thus|therefore|hence)\s*,?\s+)?the\s+(?P<pos>first|second)\s+(?:audio\s+|sound\s+)?"
                      r"(?:clip|segment|part|sound|tone|recording|note|one|sample)\s+(?P<claim>[^,.;:!?\n]+?)\s*[.!]?\s*$",
                      re.IGNORECASE)
_OTHER_CLIP = re.compile(rf"\b(?:than|compared\s+to)\s+{_CLIP}", re.IGNORECASE)  # '... than the second segment, marked as 'B''
# a question, or an instruction to find something out; '0.5 seconds' does not end it
_QUESTION = re.compile(r"(?:[^.?!]|\.(?=\d))*\?|(?:^|(?<=[.!]\s))(?:please\s+)?(?:identify|determine|judge|assess|decide|"
                       r"tell)\b(?:[^.?!]|\.(?=\d))*[.?!]", re.IGNORECASE)
_DIRECTION = VALUE_WORDS | {"heavy", "light", "more", "less", "most", "least", "greater", "smaller", "fewer", "larger", "bigger",
                            "not", "no", "never", "stronger", "weaker", "heavier", "lighter", "sharper", "duller"}
_FILLER = {"is", "are", "was", "has", "have", "had", "sounds", "seems", "appears", "be", "to", "being", "the", "a",
           "an", "of", "in", "with", "it", "its", "that", "likely", "sound", "one", "clip", "away", "listener",
           "microphone"}
# comparatives said two ways: 'closer' is 'more close', 'higher velocity' is 'greater velocity', 'brightness' is 'bright'
_MORE, _LESS = {"more", "greater", "higher", "larger", "bigger"}, {"less", "lower", "smaller", "fewer", "lesser"}
_COMPARATIVE = {"closer": "close", "nearer": "near", "farther": "far", "further": "far", "brighter": "bright",
                "darker": "dark", "louder": "loud", "softer": "soft", "quieter": "quiet", "faster": "fast",
                "slower": "slow", "stronger": "strong", "weaker": "weak", "heavier": "heavy", "lighter": "light"}
_NOUN = {"brightness": "bright", "loudness": "loud", "closeness": "close"}
_SHORT = 400


def restated_choice(text: str, prompt: str, terms: Terms | None) -> tuple[int, int, str] | None:
    """(start, end, letter) of a clip named in the answer's first sentence whose claim restates the question or the
    letter's option, or of a whole answer that says where the question's words are ('... is in clip 'A'.')."""
    if terms is None or len(text) > _SHORT or HEDGE.search(text) or SECOND_THOUGHTS.search(text):
        return None
    m = NAMED_CLIP.match(text)
    if m is None:
        return _located(text, prompt, terms)
    group = "paren" if m.group("paren") else "quoted"
    letter = m.group(group).upper()
    position = "first" if m.group("pos").lower() == "first" else "second"
    named_other = [o for o in _OTHER_CLIP.finditer(text) if _named_letter(o, terms) not in (None, letter)]
    rest = _OTHER_CLIP.sub(" ", text) if named_other else text
    if position not in terms[letter] or mentions_letter(rest, other_than=letter):
        return None  # 'the second clip (A)': the letter is not the clip's
    if any(_named_letter(o, terms) is None for o in _OTHER_CLIP.finditer(text)):
        return None  # 'than the second clip (A)': a letter that disagrees with its clip
    if contradicts(letter, m.group("claim"), prompt):
        return None  # "'A' if the first is longer": 'The first segment, 'A', is shorter' names the clip, not the option
    if not _restates(m.group("claim"), prompt, letter, position):
        return None
    return m.start(group), m.end(group), letter


def restated_lead_in(sentence: str, prompt: str, letter: str, terms: Terms | None) -> bool:
    """Does the sentence before a lone letter put the question's own words in that letter's clip ('Therefore, the
    second clip carries weaker sound intensity.' then 'B', to 'Which one carries weaker sound intensity?')?"""
    m = _LEAD_IN.match(sentence)
    if terms is None or m is None or HEDGE.search(sentence) or m.group("pos").lower() not in terms[letter]:
        return False
    return not contradicts(letter, m.group("claim"), prompt) and _restates(m.group("claim"), prompt, letter,
                                                                           m.group("pos").lower(), option=False)


def _located(text: str, prompt: str, terms: Terms) -> tuple[int, int, str] | None:
    """'The stronger reverberation is in the second clip, labeled as 'B'.': the question's words, then the clip."""
    m = _LOCATED.match(text)
    if m is None:
        return None
    letter, position = m.group("letter").upper(), (m.group("pos") or "").lower()
    if (position and position not in terms[letter]) or contradicts(letter, m.group("claim"), prompt):
        return None
    if not _restates(m.group("claim"), prompt, letter, position, option=False):
        return None
    return m.start("letter"), m.end("letter"), letter


def _restates(claim: str, prompt: str, letter: str, position: str, option: bool = True) -> bool:
    """Does the claim say what the question asks, in its words and direction (or, with `option`, what the letter's
    own option says, with the clip's position)?"""
    said = canonical(claim)
    asked = asked_words(prompt)
    if asked and _same(said, asked, comparative=_has_comparative(claim)):
        return True
    own = (described(prompt) or {}).get(letter)
    if not option or not own or not said - _FILLER - {position}:
        return False  # 'The first clip (A) is the one.' says nothing of the option
    return _same(said | {position}, canonical(" ".join(own)), comparative=False)


@lru_cache(maxsize=256)  # the question's words, found once per prompt (a regex scan of the whole prompt)
def asked_words(prompt: str) -> frozenset[str]:
    """The words of the prompt's one question, or none when it asks several or none."""
    asked = frozenset(canonical(asked_text(prompt)))
    if {"first", "second"} <= asked:
        asked -= {"first", "second"}  # '... more brightness — the first or the second?' names both, asks neither
    return asked


@lru_cache(maxsize=256)
def asked_text(prompt: str) -> str:
    """The prompt's one question ('Which one is louder?'), or '' when it asks several or none."""
    questions = _QUESTION.findall(prompt.split("Only")[0])
    return questions[0] if len(questions) == 1 else ""


def _same(said: set[str], asked: set[str], comparative: bool) -> bool:
    """All the claim's content is asked, in the same direction; a comparative answers a plain 'which is close?'."""
    if comparative and not asked & {"more", "less"}:
        said = said - {"more"}
    content = said - _FILLER
    return bool(content) and content <= asked and (asked & _DIRECTION) == (said & _DIRECTION)


def canonical(text: str) -> set[str]:
    """The words, with comparatives as 'more'/'less' and their base word ('closer' -> more, close)."""
    return set(canonical_words(text))


def canonical_words(text: str) -> list[str]:
    """canonical's words in their order ('less distant' -> less, distant; 'closer' -> more, close)."""
    out: list[str] = []
    for word in words(text):
        if word in _MORE or word in _LESS:
            out.append("more" if word in _MORE else "less")
        elif word in _COMPARATIVE:
            out += ["more", _COMPARATIVE[word]]
        else:
            out.append(_NOUN.get(word, word))
    return out


def _has_comparative(text: str) -> bool:
    return any(word in _COMPARATIVE for word in words(text))


def _named_letter(m: re.Match, terms: Terms) -> str | None:
    """The letter a clip name gives ('the second clip (B)'), or None when it is not that clip's letter."""
    letter = (m.group("paren") or m.group("quoted")).upper()
    return letter if m.group("pos").lower() in terms[letter] else None
