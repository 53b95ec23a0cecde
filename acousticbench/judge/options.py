"""What options A and B mean in a question's prompt, so words next to a letter can be checked against it."""
from __future__ import annotations

import re

Terms = dict[str, frozenset[str]]

_Q = "[\"'‘’“”`]"
_OPTION_PATTERNS = [
    re.compile(rf"{_Q}(?P<l>[AB]){_Q}\s*\((?P<d>[^)]{{1,60}})\)"),  # 'A' (first)
    re.compile(rf"{_Q}(?P<l>[AB]){_Q}\s*(?:for|if|means|to\s+mean|to\s+indicate|to\s+denote|represents|when|=|:)\s+(?P<d>(?:[^,.;'\"?]|(?<=\d)\.(?=\d)){{1,60}})"),  # 'A' for loud
    re.compile(r"\b(?P<l>[AB])\s*=\s*(?P<d>[\w-]+)"),  # A = first
    re.compile(r"(?:^|[\s(])(?P<l>[AB])[.)]\s+(?P<d>[\w\- ]{1,40}?)(?=\s+or\b|\s*[?,;\n]|\s+\(?[AB][.)]|$)"),  # A. wind or B. rain
]
_STOPWORDS = frozenset(
    "a an the it is its if for or and of to in on than that this one clip clips segment segments sound sounds "
    "audio part refers refer as be does do has have only answer with which s".split()
)
# Words that name the same side of a contrast: an option defined as 'soft' is contradicted by 'louder'.
_SYNONYMS = [
    {"loud", "louder", "loudest"}, {"soft", "softer", "quiet", "quieter"},
    {"high", "higher", "highest"}, {"low", "lower", "lowest"},
    {"fast", "faster", "quick", "quicker", "rapid"}, {"slow", "slower"},
    {"long", "longer", "longest"}, {"short", "shorter", "shortest"},
    {"bright", "brighter", "brightness"}, {"dark", "darker", "dull", "duller"},
    {"close", "closer", "near", "nearer"}, {"far", "farther", "further", "distant"},
    {"front"}, {"back", "behind", "rear"}, {"first", "1st", "former"}, {"second", "2nd", "latter"},
    {"reverberant", "reverb", "reverberation", "echo", "echoey"},
    {"hard", "harder", "forceful", "strong", "stronger", "intense"}, {"weak", "weaker", "gentle"},
]
VALUE_WORDS = frozenset().union(*_SYNONYMS)
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def words(text: str) -> list[str]:
    """Lower-case word tokens; underscores and hyphens split words ('church_bells', 'high-pitched')."""
    return _WORD.findall(text.lower().replace("_", " "))


def _expand(terms: set[str]) -> frozenset[str]:
    out = set(terms)
    for group in _SYNONYMS:
        if group & terms:
            out |= group
    return frozenset(out)


def option_terms(prompt: str) -> Terms | None:
    """{'A': words that mean A, 'B': words that mean B}, or None when the prompt does not define both."""
    for pattern in _OPTION_PATTERNS:
        found: dict[str, set[str]] = {}
        for m in pattern.finditer(prompt):
            found.setdefault(m.group("l"), set(words(m.group("d"))) - _STOPWORDS)
        if len(found) == 2 and all(found.values()):
            break
    else:
        return None
    shared = found["A"] & found["B"]  # 'fast tempo' vs 'slow tempo': only the difference means anything
    a, b = found["A"] - shared, found["B"] - shared
    if not a or not b:
        return None
    return {"A": _expand(a), "B": _expand(b)}


def words_fit(letter: str, text: str, terms: Terms | None, *, short: bool) -> bool:
    """Do the words next to a letter agree with what the letter means? Any word of the other option is a
    contradiction; a short label ('Slow, A') must also not use a value word that is not the letter's own."""
    tokens = set(words(text))
    if terms is None:
        return not (short and tokens & VALUE_WORDS)
    own, other = terms[letter], terms["B" if letter == "A" else "A"]
    if tokens & (other - own):
        return False
    if short:
        return not (tokens & VALUE_WORDS - own)
    return True
