"""rules-5: plain conclusions the rules read now (Chinese ones, a classification, a malformed answer tag), and the
hedged or conditional ones they still leave to the LLM judge."""
from __future__ import annotations

import pytest

from acousticbench.benchmarks.acoustic.judge.rules import extract_choice

PROMPT = "Which clip is louder? Answer 'A' for the first clip or 'B' for the second clip."


@pytest.mark.parametrize("response, letter", [
    ("因此，答案是A", "A"),
    ("所以应该回答'B'", "B"),
    ("所以，第二个片段更响，应该选B。", "B"),
    ("<answer B</answer>", "B"),
    ("Therefore, I would classify it as **B** (the second clip).", "B"),
    ("**A** because the first clip is louder.", "A"),
    ("第一段更响。\n\nA", "A"),
])
def test_plain_conclusions_commit(response, letter):
    judgement = extract_choice(PROMPT, response)
    assert (judgement.chosen, judgement.method) == (letter, "rules")


@pytest.mark.parametrize("response", [
    "I would classify it as A if it were louder.",
    "If the KUFS value is greater than -15, the answer is **A**. If it is less, the answer is **B**.",
    "<answer A or B</answer>",
    "所以应该回答'A'或者'B'",
])
def test_hedged_or_conditional_conclusions_do_not(response):
    assert extract_choice(PROMPT, response).status == "unparsed"
