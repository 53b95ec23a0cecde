"""The strict rules extractor: what it commits to, and everything it must leave to the LLM judge."""
from __future__ import annotations

import pytest

from acousticbench.benchmarks.acoustic.judge import judge_reply
from acousticbench.benchmarks.acoustic.judge.answer_text import answer_text
from acousticbench.benchmarks.acoustic.judge.options import option_terms
from acousticbench.benchmarks.acoustic.judge.rules import extract_choice
from acousticbench.core.records import Reply

CLIPS = "Which clip is louder? Answer 'A' (first) or 'B' (second)."
LABELS = "Are you hearing A. keyboard or B. guitar? Only answer 'A' or 'B'."
TEMPO = "Is the tempo fast or slow? Respond with 'A' for fast tempo, 'B' for slow tempo."
LOUD = "Is it loud or soft? Use 'A' to mean loud, 'B' to mean soft."

COMMITS = [
    (CLIPS, "A", "A"), (CLIPS, "b.", "B"), (CLIPS, "**A**", "A"), (CLIPS, "'B'", "B"), (CLIPS, "☞A", "A"),
    (CLIPS, "(A)", "A"), (CLIPS, "[B]", "B"), (CLIPS, "  b  ", "B"), (CLIPS, "A A A", "A"), (CLIPS, "AAAA", "A"),
    (CLIPS, "Answer: B", "B"), (CLIPS, "**Answer:** B", "B"), (CLIPS, "Answer: a", "A"), (CLIPS, "Final answer: **A**", "A"),
    (CLIPS, "The correct answer is A", "A"), (CLIPS, "the answer is 'B'", "B"), (CLIPS, "The answer is <A>.", "A"),
    (CLIPS, "The correct answer is: (B) the second clip.", "B"), (CLIPS, "I choose option B.", "B"),
    (CLIPS, "B is correct.", "B"), (CLIPS, "\\boxed{B}", "B"), (CLIPS, "答案：B", "B"), (CLIPS, "我选择A", "A"),
    (CLIPS, "A. The first clip", "A"), (CLIPS, "(a) the first", "A"), (CLIPS, "A (First clip)", "A"),
    (LABELS, "a. keyboard", "A"), (LABELS, "B. guitar", "B"), (LABELS, "The sound is A. keyboard.", "A"),
    (TEMPO, "slow, B", "B"), (LOUD, "The audio is soft.\n\nB", "B"),
    (CLIPS, "<RESPONSE>\nB\n</RESPONSE>", "B"), (CLIPS, "<answer>A</answer>", "A"), (CLIPS, "<ANSWER>: B", "B"),
    (CLIPS, "<think>The answer is B.</think>\nA", "A"), (CLIPS, "<THINK>maybe B</THINK><RESPONSE>A</RESPONSE>", "A"),
    (CLIPS, "First I listen... so the answer is B </think> A", "A"),  # the opening tag was eaten by the server
    (CLIPS, "Option A is wrong, the answer is B", "B"),
    (CLIPS, "The first clip (A) is quieter; answer: B", "B"),
    (CLIPS, "The answer is B, not A", "B"),
    (CLIPS, "The answer is A.\n\nWait, actually the answer is B.", "B"),  # the final commitment wins
    (CLIPS, "(A) first clip\n(B) second clip\nThe answer is B", "B"),
    (CLIPS, "A\n\nThe first clip (A) is louder; the second (B) is far away.", "A"),  # answer first, then why
    (CLIPS, "The answer is:\n\nA", "A"),
    (CLIPS, "I can't hear it clearly, but I think it's A.", "A"),
]

NO_COMMITMENT = [
    (CLIPS, "A or B?"), (CLIPS, "A?"), (CLIPS, "A/B"), (CLIPS, "A, B"), (CLIPS, "A B A B A"), (CLIPS, "A\nB"),
    (CLIPS, "Both A and B"), (CLIPS, "Neither A nor B"), (CLIPS, "not A"), (CLIPS, "The answer is not A"),
    # a self-correction without a final statement goes to the LLM judge, which reads it whole
    (CLIPS, "I think it's A, no wait, B"),
    (CLIPS, "The answer is A. No wait, B."), (CLIPS, "A. Actually, B."),
    (CLIPS, "The answer is A. Wait, let me reconsider."), (CLIPS, "Therefore, the answer is A. However, B could also be argued."),
    (CLIPS, "If the first clip were louder, the answer would be A."), (CLIPS, "The answer is A if the first is louder."),
    (CLIPS, "Maybe the answer is B."), (CLIPS, "The answer is A or B"), (CLIPS, "Answer: A/B"),
    (CLIPS, "a sound with a high pitch"), (CLIPS, "A piano is being played"), (CLIPS, "A bass is playing"),
    (CLIPS, "The answer is a louder sound"), (CLIPS, "Bass"), (CLIPS, "Audio B-roll"), (CLIPS, "A-weighted level"),
    (CLIPS, "The second clip is louder."), (CLIPS, "The first clip (A) is brighter."),
    (CLIPS, "A) The second clip"), (LABELS, "a. guitar"), (TEMPO, "Slow, A."), (TEMPO, "fast, B"),
    (LOUD, "A: loud\nB: soft"), (LABELS, "The sound is A. keyboard or B. guitar?"),
    (CLIPS, "The second segment plays more gradually.\n\nA"),
    (CLIPS, "<think>the answer is B"), (CLIPS, "<think>reasoning</think>"), (CLIPS, ""), (CLIPS, "none"),
    (CLIPS, "Okay, let me think. " + "The first clip has a tone. " * 60 + "So the answer is 'A"),  # cut off
    (CLIPS, "Let me think. " + "Some thoughts. " * 40 + "So the answer is A. " + "More thoughts follow. " * 40 + "Done."),
    (CLIPS, "我不选A"), (CLIPS, "I cannot hear the audio. A"), (CLIPS, "Answer (A or B): B"), (CLIPS, "Clip 1 is A and clip 2 is B."),
]

REFUSALS = [
    "I'm not capable of hearing or processing audio clips. I can only respond to text-based queries.",
    "I'm sorry, I can't help with that.", "As a text-based model, I cannot process audio.",
    "I'm happy to help, but I'm a text-based AI and do not have the capability to play audio segments.",
    "I am unable to listen to the audio file.",
    "I cannot listen to <audio 1>.",  # the prompt's placeholder for a clip the model never got
    "我无法听音频。", "抱歉，我不能处理音频文件。", "我听不到声音。",  # Chinese: I cannot hear / process the audio
]


@pytest.mark.parametrize("prompt, response, letter", COMMITS)
def test_commits_to_what_the_text_states(prompt, response, letter):
    judgement = extract_choice(prompt, response)
    assert (judgement.chosen, judgement.status, judgement.method) == (letter, "answered", "rules")


@pytest.mark.parametrize("prompt, response", NO_COMMITMENT)
def test_leaves_everything_else_unparsed(prompt, response):
    judgement = extract_choice(prompt, response)
    assert (judgement.chosen, judgement.status, judgement.method) == (None, "unparsed", "none")


@pytest.mark.parametrize("response", REFUSALS)
def test_clear_refusals_are_refused_by_rules(response):
    judgement = extract_choice(CLIPS, response)
    assert (judgement.chosen, judgement.status, judgement.method) == (None, "refused", "rules")


def test_a_refusal_that_still_names_an_option_is_not_a_refusal():
    assert extract_choice(CLIPS, "I can't hear the audio, but if I had to guess: A or B").status == "unparsed"
    assert extract_choice(CLIPS, "I'm sorry, I can't hear it. Answer: B").chosen == "B"


def test_reasoning_is_removed_and_a_tagged_answer_preferred():
    assert answer_text("<think>long</think>\n\nB") == "B"
    assert answer_text("thinking without an opening tag</think>A") == "A"
    assert answer_text("<think>cut off mid-thought") == ""
    assert answer_text("Intro <answer>A</answer> and <answer>B</answer>") == "B"
    assert answer_text("<ANSWER></ANSWER> A") == "<ANSWER></ANSWER> A"


def test_option_meanings_are_read_from_the_prompt():
    assert option_terms(LABELS)["A"] >= {"keyboard"} and "guitar" in option_terms(LABELS)["B"]
    assert "first" in option_terms(CLIPS)["A"] and "second" in option_terms(CLIPS)["B"]
    assert "slower" in option_terms(TEMPO)["B"]  # comparatives of the option's word count as the option
    assert option_terms("Which is louder? Answer 'A' or 'B'.") is None


def test_judge_reply_is_the_synchronous_rules_only_path():
    assert judge_reply(Reply(text="**B**")).chosen == "B"
    assert judge_reply(Reply(text=None, refused=True)).status == "refused"
    assert judge_reply(Reply(text="The second one."), prompt=CLIPS).status == "unparsed"
