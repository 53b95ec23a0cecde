"""Where a text names the letters A and B (a lone letter, or any standalone letter token that is not the article 'A'),
and whether it states one as its answer."""
from __future__ import annotations

import re

_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?:(?P<upper>[AB])(?![A-Za-z0-9]|-[A-Za-z])"
                    r"|[\"'‘“(\[*<](?P<lower>[ab])[\"'’”)\]*>]|(?<![^\s(])[ab][.)](?=\s|$))")
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+|\n\s*)$")
_LONG = 1000  # as the rules: shorter replies that stop without a period are finished ones that lack it
_MID_SENTENCE = re.compile(r"[\w,;:(\-'\"‘“—]$")
_LAST_LETTER = re.compile(r"(?<![A-Za-z0-9])[AB][*_'\"’”)\]]*$")


def single_letter(text: str) -> str | None:
    """'A', '**b.**', '☞A', 'A A A', 'AAAA' -> the letter; a word, a question mark or both letters -> None."""
    if "?" in text:
        return None
    letters = set()
    for token in re.findall(r"[^\W_]+", text):
        if not (len(token) == 1 or (token.isupper() and len(set(token)) == 1)):
            return None
        letters.add(token[0].upper())
    return letters.pop() if len(letters) == 1 and letters <= {"A", "B"} else None


def states_letter(text: str) -> bool:
    """Does the text name option A or B anywhere? 'A piano is playing' does not; 'It is A.' and "'b'" do."""
    if single_letter(text):
        return True
    for m in _TOKEN.finditer(text):
        article = (m.group("upper") == "A" and re.match(r"\s+[a-z]", text[m.end():])
                   and _SENTENCE_START.search(text[: m.start()]))
        if not article:
            return True
    return False


def states_answer(text: str) -> bool:
    """Does the answer text state a letter as its answer? It names one (states_letter) and is not a long reply that
    stops mid-sentence ('... Wait,', '... If the second is louder, then'): a reply the token limit cut while still
    reasoning has mentioned letters without concluding. One that ends on a letter ('**Final Answer:** B', "'A") counts."""
    return states_letter(text) and not unfinished(text)


def unfinished(text: str) -> bool:
    """A long reply whose last character leaves the sentence open (a word, a comma, an opening quote), not on a letter."""
    end = text.rstrip()
    return len(end) >= _LONG and bool(_MID_SENTENCE.search(end)) and not _LAST_LETTER.search(end)
