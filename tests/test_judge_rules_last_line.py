"""rules-6: a letter alone on the last line after a sentence that puts the question's words in that letter's clip;
and which texts count as stating a letter as their answer (a long trace cut mid-sentence does not)."""
from __future__ import annotations

import pytest

from acousticbench.benchmarks.acoustic.judge.letters import states_answer
from acousticbench.benchmarks.acoustic.judge.rules import extract_choice

PROMPT = ("Two clips with a 0.5-second silent interval. Which one carries weaker sound intensity? "
          "Respond with 'A' for the first, 'B' for the second.")
TRACE = "Okay, let me think about which clip is louder. " * 25  # 1,175 characters of reasoning


@pytest.mark.parametrize("response, letter", [
    ("The first clip (A) is a loud brass note. The second clip (B) is quieter. "
     "Therefore, the second clip carries weaker sound intensity.\n\nB", "B"),
    ("So the first clip carries weaker sound intensity.\nA", "A"),
])
def test_a_last_line_letter_after_the_question_in_its_clip_commits(response, letter):
    judgement = extract_choice(PROMPT, response)
    assert (judgement.chosen, judgement.method) == (letter, "rules")


@pytest.mark.parametrize("response", [
    "Therefore, the first clip carries weaker sound intensity.\n\nB",  # the clip is the other letter's
    "Therefore, the second clip carries stronger sound intensity.\n\nB",  # the other direction
    "Maybe the second clip carries weaker sound intensity.\n\nB",  # a hedge
    "The second clip carries weaker sound intensity?\n\nB",  # a question
    "Therefore, the second clip carries weaker sound intensity.\n\nA or B",
    "Therefore, the second clip carries weaker sound intensity.\n\nA",
])
def test_a_lead_in_that_disagrees_or_hedges_does_not(response):
    assert extract_choice(PROMPT, response).status == "unparsed"


def test_a_long_trace_cut_mid_sentence_states_no_answer():
    assert not states_answer(TRACE + "If clip A is louder, then B is softer.\n\nWait, but the")
    assert not states_answer(TRACE + "So the answer is B.\n\nBut")  # cut on a second thought
    assert extract_choice(PROMPT, TRACE + "So the answer is B.\n\nBut").status == "unparsed"


@pytest.mark.parametrize("text", [
    TRACE + "So the answer is B.",  # it ends on a finished sentence
    TRACE + "**Final Answer:** B",  # it ends on its letter
    TRACE + "so the answer is 'A",  # cut, but on a letter: counted, and left unread
    "The sound is not far away, as indicated by 'A' which is within 3 meters",  # short: a finished reply, no period
])
def test_replies_that_end_on_an_answer_or_are_short_still_state_one(text):
    assert states_answer(text)
