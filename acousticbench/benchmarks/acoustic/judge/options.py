"""What options A and B mean in a question's prompt, so words next to a letter can be checked against it."""
from __future__ import annotations

import re
from functools import lru_cache

Terms = dict[str, frozenset[str]]

_Q = "[\"'‘’“”`]"
_OPTION_PATTERNS = [
    re.compile(rf"{_Q}(?P<l>[AB]){_Q}\s*\((?P<d>[^)]{{1,60}})\)"),  # 'A' (first)
    re.compile(rf"{_Q}(?P<l>[AB]){_Q}\s*(?:for|if|means|to\s+mean|to\s+indicate|to\s+denote|represents|when|=|:)\s+(?P<d>(?:[^,.;'\"?]|(?<=\w)['’](?=s\b)|(?<=\d)\.(?=\d)){{1,60}})"),  # 'A' for loud
    re.compile(r"\b(?P<l>[AB])\s*=\s*(?P<d>[\w-]+)"),  # A = first
    re.compile(r"(?:^|[\s(])(?P<l>[AB])[.)]\s+(?P<d>[\w\- ]{1,40}?)(?=\s+or\b|\s*[?,;\n]|\s+\(?[AB][.)]|$)"),  # A. wind or B. rain
]
_OTHERWISE = re.compile(rf"{_Q}(?P<l>[AB]){_Q}\s+otherwise\b")
_STOPWORDS = frozenset(
    "a an the it is its if for or and of to in on than that this one clip clips segment segments sound sounds "
    "audio part refers refer as be does do has have only answer with which s".split()
)
# Words that name the same side of a contrast, in opposite pairs: an option defined as 'soft' is contradicted by 'louder'.
_CONTRASTS = [
    ({"loud", "louder", "loudest"}, {"soft", "softer", "quiet", "quieter"}),
    ({"high", "higher", "highest"}, {"low", "lower", "lowest"}),
    ({"fast", "faster", "quick", "quicker", "rapid"}, {"slow", "slower"}),
    ({"long", "longer", "longest"}, {"short", "shorter", "shortest"}),
    ({"bright", "brighter", "brightness"}, {"dark", "darker", "dull", "duller"}),
    ({"close", "closer", "near", "nearer"}, {"far", "farther", "further", "distant"}),
    ({"front"}, {"back", "behind", "rear"}), ({"first", "1st", "former"}, {"second", "2nd", "latter"}),
    ({"hard", "harder", "forceful", "strong", "stronger", "intense"}, {"weak", "weaker", "gentle"}),
]
_SYNONYMS = [group for pair in _CONTRASTS for group in pair] + [{"reverberant", "reverb", "reverberation", "echo", "echoey"}]
VALUE_WORDS = frozenset().union(*_SYNONYMS)
# 'lasts less time' is 'shorter' for the contrast check
_IDIOMS = re.compile(r"\b(?:less|more)\s+time\b", re.IGNORECASE)
_IDIOM_WORDS = {"less": "shorter", "more": "longer"}
_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
# 'not a crow', 'unlike the hand saw', 'than the second clip': the option named there is the one set aside
# 'Classify the velocity as fast if it is greater than 75; otherwise, classify it as slow.', then 'A' for high:
# the prompt itself makes 'fast' the high option's word and 'slow' the low one's
_THRESHOLD = re.compile(r"\bas\s+(?P<over>[a-z]+)\s+if\s+it\s+is\s+(?:greater\s+than|above)\s+-?[\d.]+\s*[;,]?\s*"
                        r"otherwise,?\s+classify\s+it\s+as\s+(?P<under>[a-z]+)\b", re.IGNORECASE)
_SET_ASIDE = re.compile(r"\bnot\b[^,.;:!?\n]*|\b(?:unlike|than|rather\s+than|instead\s+of|compared\s+(?:to|with)|"
                        r"(?:distinct|different)\s+from)\b"
                        r"(?:[^.!?\n]|\.(?=\d))*", re.IGNORECASE)


def words(text: str) -> list[str]:
    """Lower-case word tokens; underscores and hyphens split words ('church_bells', 'high-pitched')."""
    return _WORD.findall(text.lower().replace("_", " "))


def _expand(terms: set[str]) -> frozenset[str]:
    out = set(terms)
    for group in _SYNONYMS:
        if group & terms:
            out |= group
    return frozenset(out)


@lru_cache(maxsize=256)  # asked on every answer of a prompt; the result is read, never changed
def described(prompt: str) -> dict[str, frozenset[str]] | None:
    """{'A': the words that describe A, 'B': ...} from the first option pattern that defines both, or None."""
    for pattern in _OPTION_PATTERNS:
        found: dict[str, frozenset[str]] = {}
        for m in pattern.finditer(prompt):
            found.setdefault(m.group("l"), frozenset(words(m.group("d"))) - _STOPWORDS)
        if len(found) == 2 and all(found.values()):
            return found
    return None


@lru_cache(maxsize=256)
def sole_option(prompt: str) -> tuple[str, frozenset[str]] | None:
    """"'A' if it's within 3 meters, 'B' otherwise": ('A', the words of A) where the other letter is only 'otherwise'."""
    m = _OTHERWISE.search(prompt)
    if m is None:
        return None
    letter = "B" if m.group("l") == "A" else "A"
    for d in _OPTION_PATTERNS[1].finditer(prompt):
        if d.group("l") == letter and set(words(d.group("d"))) - _STOPWORDS:
            return letter, frozenset(set(words(d.group("d"))) - _STOPWORDS)
    return None


@lru_cache(maxsize=256)  # a run asks a few prompts thousands of times; the result is read, never changed
def option_terms(prompt: str) -> Terms | None:
    """{'A': words that mean A, 'B': words that mean B}, or None when the prompt does not define both."""
    found = described(prompt)
    if found is None:
        return None
    shared = found["A"] & found["B"]  # 'fast tempo' vs 'slow tempo': only the difference means anything
    a, b = found["A"] - shared, found["B"] - shared
    if not a or not b:
        return None
    a, b = _thresholded(prompt, a, b)
    return {"A": _expand(a), "B": _expand(b)}


def _thresholded(prompt: str, a: frozenset[str], b: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Add the words a threshold sentence gives the 'high' and the 'low' option ('fast if it is greater than 75')."""
    m = _THRESHOLD.search(prompt)
    if m is None:
        return a, b
    over, under = {m.group("over").lower()}, {m.group("under").lower()}
    if "high" in a and "low" in b:
        return a | over, b | under
    if "low" in a and "high" in b:
        return a | under, b | over
    return a, b


def contradicts(letter: str, text: str, prompt: str) -> bool:
    """Does the text say the opposite of a word in the letter's whole description? ('A' if the first is longer:
    'the first is shorter, A' contradicts itself, though 'longer' alone does not tell A from B.)"""
    found = described(prompt)
    if found is None:
        return False
    own, tokens = found[letter], set(words(_IDIOMS.sub(lambda m: _IDIOM_WORDS[m.group().split()[0].lower()], text)))
    return any((own & one and not own & other and tokens & other) or (own & other and not own & one and tokens & one)
               for one, other in _CONTRASTS)


def affirmed(text: str) -> str:
    """The text without the phrases that set an option aside ('..., not a crow'): what is left is what it asserts."""
    return _SET_ASIDE.sub(" ", text)


def numbers_fit(letter: str, text: str, terms: Terms | None) -> bool:
    """Where both options are counts ('A' for 4, 'B' for 1), any count the text states must be the letter's own."""
    if terms is None or not all(t and all(w.isdigit() for w in t) for t in terms.values()):
        return True
    return all(w in terms[letter] for w in words(text) if w.isdigit())


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
