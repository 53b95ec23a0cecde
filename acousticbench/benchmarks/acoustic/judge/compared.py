"""Which clip a comparison puts the question's property in: to 'Which one is louder?', 'So the second clip is louder.'
names the second clip's letter, and so do 'The first clip is quieter.' and 'Clip B is louder than clip A.'

Read only when it needs no understanding: each option is one clip's position, the sentence (or each of its clauses
that says a way) names one clip (by position or letter; 'than the first', 'not A' set the other aside), says the
question's way or its exact opposite ('quieter' and 'less loud' to 'louder'), and, when `strict`, uses no word the
question does not ('noticeably', 'sounds' carry nothing). Anything else (a hedge, a negation, clauses that disagree,
another way) reads as no comparison.
"""
from __future__ import annotations

import re

from acousticbench.benchmarks.acoustic.judge.cues import (BOUNDARY, CONDITION, HEDGE, NEGATION, SECOND_THOUGHTS,
                                                          mentions_letter)
from acousticbench.benchmarks.acoustic.judge.options import described
from acousticbench.benchmarks.acoustic.judge.restated import asked_text, canonical_words

_FIRST, _SECOND = {"first", "former", "1st"}, {"second", "latter", "2nd"}
# the contrasts a way is read on, as (up, down); 'more'/'less' just before a word of one turns it
_POLES = [({"loud"}, {"soft", "quiet"}), ({"high"}, {"low"}), ({"fast", "quick", "rapid"}, {"slow"}),
          ({"long"}, {"short"}), ({"bright"}, {"dark", "dull"}), ({"close", "near"}, {"far", "distant"}),
          ({"hard", "strong", "forceful", "intense"}, {"weak", "gentle"}),
          ({"front", "frontal"}, {"back", "behind", "rear", "backward"})]
_NO_WAY = {"not", "no", "never", "heavy", "light", "most", "least", "equal", "same", "similar", "both", "neither"}
_MORE_OF = {"longer": "long", "shorter": "short", "duller": "dull", "quicker": "quick", "gentler": "gentle",
            "harder": "hard"}  # comparatives canonical_words leaves whole
# words that add nothing to which clip or which way: connectives, intensifiers, the clips' own names
_EMPTY = {"is", "are", "was", "has", "have", "had", "sounds", "sound", "seems", "appears", "be", "being", "the", "a",
          "an", "of", "in", "it", "its", "that", "one", "clip", "clips", "segment", "segments", "part", "parts",
          "recording", "audio", "so", "thus", "therefore", "hence", "overall", "clearly", "noticeably", "slightly",
          "much", "significantly", "definitely", "obviously", "somewhat", "bit", "considerably", "comparing",
          "conclusion", "two", "this", "which", "and", "then", "to", "me", "with", "option", "choice", "answer",
          "final", "even", "distinctly", "evidently", "by", "there", "b", "more", "less", "very", "quite"}
# the other clip set aside: 'than the first (one)', 'compared to clip A', 'than that of the second segment', 'not A'
_SET_ASIDE = re.compile(r"\b(?:than|compared\s+(?:to|with)|unlike|versus|vs\.?|not)\s+(?:that\s+of\s+|those\s+of\s+)?"
                        r"(?:the\s+)?(?:(?:first|second|former|latter|other|1st|2nd)\b(?:\s+(?:one|clip|segment|part|"
                        r"sound|recording|audio|sample|note|tone)\b)?"
                        r"|(?:(?:clip|segment|option|part)\s+)?[\"'‘“(*]*[AB][\"'’”)*]*(?![A-Za-z0-9]))", re.IGNORECASE)
# where one clause of a sentence ends and one about the other clip may begin
_CLAUSE = re.compile(r"[;,]?\s*\b(?:while|whereas|but|and|however|although|though)\b|;|,\s*(?=(?:the\s+|clip\s+)?"
                     r"(?:first|second|[AB]\b))", re.IGNORECASE)
_DURATION = re.compile(r"\d\s*-?\s*(?:second|sec)s?\b", re.IGNORECASE)  # '0.5-second' names no clip
_REASON = re.compile(r",?\s*\bbecause\b", re.IGNORECASE)  # strict: the claim, not why ('..., because its ...')
_UNGLOSSED = re.compile(r"[\u3400-\u9fff]+")
_PARTICLES = re.compile(r"(?:两段|两个)(?:音频|片段)?中|相比之下|综上所述|综上|总的来说|总之|根据音频(?:内容)?|所以|因此|因而|"
                        r"明显|非常|听起来|一些|一点|我认为|我觉得|[的得地了是就都也很要还更故则些吧呢啊]")
_SHORT = 400  # a comparison is the answer only in a short reply; in reasoning it may be a step
Way = tuple[int, frozenset[int]]  # +1 or -1, and the contrasts named (none for a bare 'higher', 'more')


def compared_clip(sentence: str, prompt: str, strict: bool = True) -> str | None:
    """The letter whose clip the sentence says has the question's property, or None when it does not say so plainly.
    Clauses that each compare one clip ('The first clip is soft, while the second is loud.') must agree. Not `strict`
    (the sentence only checks a letter given on its own line), it may give reasons in other words ('The first clip
    has a noticeable echo, suggesting the speaker is further away.' to 'Which seems close?') where the question names
    a contrast: another property then shows as another contrast."""
    position = _positions(prompt)
    if position is None:
        return None  # the options are not just the clips ("'A' if the first is longer": the option has a way)
    claim = _DURATION.sub(" ", _SET_ASIDE.sub(" ", _REASON.split(sentence)[0] if strict else sentence))
    if HEDGE.search(claim) or NEGATION.search(claim) or CONDITION.search(claim):
        return None
    whole = _compared(claim, prompt, position, strict)
    if whole is not None:
        return whole
    ways = [clause for clause in _CLAUSE.split(claim) if set(_ordered(clause)) & _WAY_WORDS]  # the rest says no way
    readings = {_compared(clause, prompt, position, strict) for clause in ways}
    return readings.pop() if len(readings) == 1 and None not in readings else None


def _compared(claim: str, prompt: str, position: dict[str, str], strict: bool) -> str | None:
    said, asked = _ordered(claim), _ordered(asked_text(prompt))
    named = {letter for letter in "AB" if mentions_letter(claim, other_than="B" if letter == "A" else "A")
             or set(said) & (_FIRST if position[letter] == "first" else _SECOND)}
    way, wanted = _way(said), _way(asked)
    if len(named) != 1 or way is None or wanted is None or way[1] != wanted[1]:
        return None
    if (strict or not way[1]) and set(said) - _EMPTY - _FIRST - _SECOND - _pole_words(way[1]) - set(asked):
        return None  # a word the question does not use: another property, or a reason
    letter = named.pop()
    return letter if way[0] == wanted[0] else "B" if letter == "A" else "A"


def stated_comparison(text: str, prompt: str) -> tuple[int, int, str, bool] | None:
    """(start, end, letter, ok) of the last comparison in a short answer ('第二个片段更响。', glossed 'the second clip
    louder.'); ok when every comparison in it names the same clip and nothing in it hedges or asks."""
    if len(text) > _SHORT:
        return None
    found, start = [], 0
    for end in [b.start() for b in BOUNDARY.finditer(text)] + [len(text)]:
        letter = compared_clip(text[start:end], prompt) if text[start:end].strip() else None
        if letter:
            found.append((start, end, letter))
        start = end + 1
    if not found:
        return None
    start, end, letter = found[-1]
    agree = len({f[2] for f in found}) == 1
    return start, end, letter, agree and not (HEDGE.search(text) or SECOND_THOUGHTS.search(text))


def _positions(prompt: str) -> dict[str, str] | None:
    """{'A': 'first', 'B': 'second'} when each option is only its clip's position ("'A' (refers to the first clip)")."""
    found = described(prompt)
    if found is None:
        return None
    position = {}
    for letter, own in found.items():
        if not own or own - _FIRST - _SECOND - _EMPTY or (own & _FIRST and own & _SECOND):
            return None
        position[letter] = "first" if own & _FIRST else "second"
    return position if position["A"] != position["B"] else None


def _ordered(text: str) -> list[str]:
    """canonical_words, with the comparatives it leaves whole split too ('longer' -> more, long); Chinese left unglossed
    ('音量' in '第二段的音量更高') is a word of its own, so it counts as a word the question does not use."""
    out: list[str] = []
    for word in canonical_words(text):
        out += ["more", _MORE_OF[word]] if word in _MORE_OF else [word]
    return out + _UNGLOSSED.findall(_PARTICLES.sub(" ", text))


def _way(said: list[str]) -> Way | None:
    """'louder', 'less quiet', 'more distant', 'the opposite of frontal' -> (+1 or -1, their contrast); a bare 'higher'
    or 'more' -> (+1 or -1,
    none); None when it says two ways at once, none at all, or a word whose way is not read ('not', 'equal')."""
    if set(said) & _NO_WAY:
        return None
    signs, poles = set(), set()
    for index, word in enumerate(said):
        turn = -1 if (index and said[index - 1] == "less") or _opposite_of(said[:index]) else 1
        for pole, (up, down) in enumerate(_POLES):
            if word in up or word in down:
                signs.add(turn * (1 if word in up else -1))
                poles.add(pole)
    if not poles:  # 'higher pitch', 'more force': the way is the comparative's alone
        signs = {1 if word == "more" else -1 for word in said if word in ("more", "less")}
    if len(signs) != 1:
        return None
    return signs.pop(), frozenset(poles)


def _opposite_of(before: list[str]) -> bool:
    """'the opposite of (a) frontal ...': the words just before a way name its other pole."""
    tail = before[-3:] if before[-1:] in (["a"], ["an"], ["the"]) else before[-2:]
    return tail[:2] == ["opposite", "of"]


_WAY_WORDS = set().union(*(up | down for up, down in _POLES)) | {"more", "less"}


def _pole_words(poles: frozenset[int]) -> set[str]:
    return set().union(*(up | down for index, (up, down) in enumerate(_POLES) if index in poles)) if poles else set()
