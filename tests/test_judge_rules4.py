"""Plainly written answers the rules read since rules-4, each kind with real corpus answers for and against it
(SonicBench's released outputs, quoted short; the prompt is the question's, instructions trimmed)."""
from __future__ import annotations

import pytest

from acousticbench.judge.options import option_terms
from acousticbench.judge.rules import extract_choice

VELOCITY = ("This is an audio clip. Classify the velocity as fast if it is greater than 75; otherwise, classify it as "
            "slow. Determine if the attack is forceful or soft. Use 'A' for high intensity, 'B' for low. Only answer "
            "'A' or 'B'.")
DYNAMIC = ("You will hear an audio clip. Classify the velocity as fast if it is greater than 75; otherwise, classify it "
           "as slow. Judge the dynamic level: is it forte (high) or piano (low)? Answer 'A' for high, 'B' for low.")

# the prompt's threshold sentence makes 'fast' the word of the high option and 'slow' the word of the low one
THRESHOLD = [
    (DYNAMIC, "fast, A", "A"),  # Qwen2-Audio/velocity_recog:19
    (VELOCITY, "slow, B", "B"),  # Qwen3-Omni/velocity_recog:57
    ("The stimulus is an audio clip. Classify the velocity as fast if it is greater than 75; otherwise, classify it as "
     "slow. Assess if the sound has high or low MIDI velocity. Answer 'A' for high, 'B' for low.", "slow B", "B"),  # MiMo
]
NOT_THRESHOLD = [
    (VELOCITY, "Slow, A."),  # Qwen2-Audio/velocity_recog:7: slow is B's
    (DYNAMIC, "A, low."),  # Qwen2-Audio/velocity_recog:39
    ("You are given an audio clip. Classify the velocity as fast if it is greater than 75; otherwise, classify it as "
     "slow. Does the sound have a strong or weak onset? Answer 'A' for high velocity, 'B' for low.",
     "The sound has a strong onset.\n\nB"),  # MiMo-Audio_think_mode/velocity_recog:93
    ("Is the tempo fast or slow? Answer 'A' for high, 'B' for low.", "fast, A"),  # no threshold sentence: no mapping
]


@pytest.mark.parametrize("prompt, response, letter", THRESHOLD)
def test_a_label_in_the_words_of_the_prompts_threshold_commits(prompt, response, letter):
    assert (extract_choice(prompt, response).chosen, extract_choice(prompt, response).method) == (letter, "rules")


@pytest.mark.parametrize("prompt, response", NOT_THRESHOLD)
def test_a_label_against_the_threshold_or_without_one_stays_unparsed(prompt, response):
    assert extract_choice(prompt, response).status == "unparsed"


def test_the_threshold_adds_its_words_to_the_high_and_low_options():
    terms = option_terms(VELOCITY)
    assert {"high", "fast"} <= terms["A"] and {"low", "slow"} <= terms["B"]
