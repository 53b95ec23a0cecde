"""AudioICL scoring as the public eval_str.py does it (plus a lenient mode that also reads number words), and the
strict verdict the harness credits: never a refusal, a cut reply or an answer that names more than one label."""
from __future__ import annotations

import re
from typing import Literal

from acousticbench.benchmarks.audioicl import INTEGER_TASKS

Scoring = Literal["strict", "lenient"]
SCORINGS: tuple[str, ...] = ("strict", "lenient")
REMAP_LENGTH = 3  # the public scorer's --ar-len: a remap answer is exactly three letters

_INT = re.compile(r"[-+]?\d+")  # numbers inside words count too ("k3" -> 3), as in the public scorer
_STRIP = re.compile(r"[\s.,;:!?()\[\]{}\"']+")  # what the public normalisation removes; hyphens stay
_LETTER = re.compile(r"[A-Za-z]")


def normalize(text: str | None) -> str:
    """Lower case without whitespace and the public scorer's punctuation set."""
    return _STRIP.sub("", ("" if text is None else str(text)).strip().lower())


def last_int(text: str | None) -> int | None:
    found = _INT.findall("" if text is None else str(text))
    return int(found[-1]) if found else None


def anomaly_label(text: str | None) -> str | None:
    """'normal' or 'anomalous'; 'anomal'/'abnorm' anywhere wins over 'normal' (so both words read as anomalous)."""
    s = normalize(text)
    exact = {"normal": "normal", "anomalous": "anomalous", "anomaly": "anomalous", "abnormal": "anomalous",
             "true": "anomalous", "1": "anomalous", "false": "normal", "0": "normal"}
    if s in exact:
        return exact[s]
    if "anomal" in s or "abnorm" in s:
        return "anomalous"
    return "normal" if "normal" in s else None


def remap_letters(text: str | None) -> str | None:
    """Every letter of the response, upper-cased; None unless there are exactly three (extra words make it wrong)."""
    if text is None:
        return None
    letters = "".join(_LETTER.findall(str(text))).upper()
    return letters if letters and len(letters) == REMAP_LENGTH else None


def extract(task: str, response: str | None, scoring: Scoring = "strict") -> str | None:
    """What the scorer reads from a response; None when it finds no answer."""
    if response is None:
        return None
    if task in INTEGER_TASKS:
        value = last_int(words_to_digits(response) if scoring == "lenient" else response)
        return None if value is None else str(value)
    if task == "AnomalyDetect":
        return anomaly_label(response)
    if task == "AudioRemap":
        return remap_letters(response)
    return normalize(response)  # MorseCode, and any other task: normalised exact match


def gold(task: str, gt: str) -> str | None:
    """The gold label read the same way (the public scorer parses both sides)."""
    return extract(task, gt, "strict")


def score(task: str, response: str | None, gt: str, scoring: Scoring = "strict") -> tuple[str | None, bool]:
    """(prediction, correct) as the public scorer reads it; a missing response or an unreadable one is wrong."""
    prediction = extract(task, response, scoring)
    expected = gold(task, gt)
    return prediction, prediction is not None and expected is not None and prediction == expected


# '<audio 3>', 'clip 3', 'demo 2': numbers that name a clip or an example, not a count
_CLIP_NUMBER = re.compile(r"<\s*audio\s*\d+\s*>|\b(?:audio|clip|example|demo(?:nstration)?|sample|shot|query|"
                          r"episode|item)\s*#?\d+\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|\n")  # '2.5' does not end a sentence
_WORDS = re.compile(r"[a-z]+")


def concluded_int(text: str, scoring: Scoring = "strict") -> str | None:
    """The one integer the answer concludes: its last sentence that holds an integer (clip and example numbers left
    out) must hold just one value, or end an equation ('9 - 7 = 2'); None for a hedge ('3 or 4') or no number."""
    text = _CLIP_NUMBER.sub(" ", words_to_digits(text) if scoring == "lenient" else text)
    sentences = [s for s in _SENTENCE_END.split(text) if _INT.search(s)]
    if not sentences:
        return None
    last = sentences[-1].rsplit("=", 1)[-1] if "=" in sentences[-1] else sentences[-1]
    values = {int(v) for v in _INT.findall(last)}
    return str(values.pop()) if len(values) == 1 else None


def names_one_label(task: str, response: str, scoring: Scoring = "strict") -> bool:
    """Does the answer commit to one label? Both 'normal' and 'anomalous' named, or two counts in the concluding
    sentence, is a hedge, whatever the public scorer's tie-break picks."""
    prediction = extract(task, response, scoring)
    if task in INTEGER_TASKS:
        return prediction is not None and concluded_int(response, scoring) == prediction
    if task == "AnomalyDetect":
        found = {"anomalous" if w.startswith(("anomal", "abnorm")) else "normal" for w in _WORDS.findall(
            response.lower()) if w.startswith(("anomal", "abnorm", "normal"))}
        return len(found) <= 1
    return True  # AudioRemap (exactly three letters) and MorseCode (the whole answer) name one label or none


def strict_correct(task: str, response: str | None, gt: str, scoring: Scoring = "strict") -> bool:
    """The harness's verdict on an answered episode: the public scorer's, only when the answer names one label."""
    return response is not None and score(task, response, gt, scoring)[1] and names_one_label(task, response, scoring)


_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
         "seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_U, _T, _D = "|".join(_UNITS), "|".join(_TENS), "|".join(_UNITS[1:10])
_BELOW_100 = rf"(?:(?:{_T})(?:[\s-]+(?:{_D}))?|(?:{_U}))"
_SPELLED = re.compile(
    rf"\b(?P<sign>(?:minus|negative)\s+)?(?:(?P<hundreds>{_U})[\s-]+hundred(?:[\s-]+and)?(?:[\s-]+(?P<rest>{_BELOW_100}))?"
    rf"|(?P<small>{_BELOW_100}))\b", re.IGNORECASE)


def _below_100(words: str) -> int:
    parts = re.split(r"[\s-]+", words.lower())
    return sum(_UNITS.index(w) if w in _UNITS else 10 * (_TENS.index(w) + 2) for w in parts)


def _spelled_value(match: re.Match) -> str:
    if match.group("hundreds"):
        value = 100 * _UNITS.index(match.group("hundreds").lower()) + (_below_100(match.group("rest")) if match.group("rest") else 0)
    else:
        value = _below_100(match.group("small"))
    return ("-" if match.group("sign") else "") + str(value)


def words_to_digits(text: str) -> str:
    """'seven' -> '7', 'twenty-one' -> '21', 'minus three' -> '-3', 'two hundred and five' -> '205'; the rest kept."""
    return _SPELLED.sub(_spelled_value, text)
