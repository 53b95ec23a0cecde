"""AudioICL scoring follows the public eval_str.py rules on a table of responses; lenient scoring adds number words."""
from __future__ import annotations

import pytest

from acousticbench.benchmarks.audioicl.scoring import score, words_to_digits

STRICT = [
    # integer tasks: the last signed integer, wherever it is
    ("AudioCount", "7", "7", True),
    ("AudioCount", "There are 7 knocks.", "7", True),
    ("AudioCount", "I first thought 3, but it is 5", "5", True),
    ("AudioCount", "5 events, see clip k3", "5", False),  # numbers inside words count: the last is 3
    ("AudioOperatorHard", "The result is -10.", "-10", True),
    ("AudioOperatorHard", "9-7", "2", False),  # '-7' is the last signed integer
    ("AudioOperator", "+12", "12", True),
    ("AudioLength", "seven", "7", False),  # no digits: no answer in strict scoring
    ("AudioLengthHard", "", "3", False),
    ("AudioCount", None, "3", False),  # a failed request is wrong, never skipped
    # AudioRemap: every letter of the response, exactly three
    ("AudioRemap", "EGE", "EGE", True),
    ("AudioRemap", "ege", "EGE", True),
    ("AudioRemap", "E-G-E.", "EGE", True),
    ("AudioRemap", "The answer is EGE", "EGE", False),  # extra words add letters
    ("AudioRemap", "EG", "EGE", False),
    # AnomalyDetect: normal / anomalous words
    ("AnomalyDetect", "Anomalous", "Anomalous", True),
    ("AnomalyDetect", "anomaly.", "Anomalous", True),
    ("AnomalyDetect", "abnormal", "Anomalous", True),
    ("AnomalyDetect", "Normal", "Normal", True),
    ("AnomalyDetect", "It sounds normal, not anomalous", "Normal", False),  # both words: anomalous wins
    ("AnomalyDetect", "It sounds normal.", "Normal", True),
    ("AnomalyDetect", "true", "Anomalous", True),
    ("AnomalyDetect", "I cannot tell", "Normal", False),
    # MorseCode: normalised exact match (case, spaces, punctuation)
    ("MorseCode", "Prior", "prior", True),
    ("MorseCode", " P R I O R. ", "prior", True),
    ("MorseCode", "'prior'!", "prior", True),
    ("MorseCode", "p-r-i-o-r", "prior", False),  # hyphens are not in the public punctuation set
    ("MorseCode", "The word is prior", "prior", False),
]


@pytest.mark.parametrize("task, response, gt, correct", STRICT)
def test_strict_scoring_matches_the_public_rules(task, response, gt, correct):
    assert score(task, response, gt)[1] is correct


def test_prediction_is_what_the_scorer_read():
    assert score("AudioCount", "I hear 4 then 6", "6") == ("6", True)
    assert score("AudioRemap", "The answer is EGE", "EGE") == (None, False)
    assert score("AnomalyDetect", "ANOMALY", "Anomalous") == ("anomalous", True)
    assert score("MorseCode", "Prior.", "prior") == ("prior", True)


@pytest.mark.parametrize("response, gt", [
    ("seven", "7"), ("It is twenty-one.", "21"), ("minus three", "-3"), ("Forty two", "42"),
    ("two hundred and five", "205"), ("I said 4, no, eight", "8"), ("zero", "0"),
])
def test_lenient_scoring_reads_number_words(response, gt):
    assert score("AudioCount", response, gt, "lenient")[1]
    assert not score("AudioCount", response, gt, "strict")[1] or response[-1].isdigit()


def test_lenient_scoring_changes_nothing_else():
    assert words_to_digits("someone often") == "someone often"  # words that contain number words stay
    assert score("MorseCode", "seven", "seven", "lenient")[1]
    assert not score("AudioRemap", "The answer is EGE", "EGE", "lenient")[1]
