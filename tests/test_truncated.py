"""A reply the token limit cut is never scored silently: every record keeps the backend's finish_reason, a cut
reply is `truncated` (never credited), metrics count it, and both judges are told of the cut."""
from __future__ import annotations

import asyncio
import json

from acousticbench.benchmarks.acoustic.judge import Judge
from acousticbench.benchmarks.acoustic.judge.llm import CUT_MARK, messages_for
from acousticbench.benchmarks.acoustic.judge.rules import extract_choice
from acousticbench.core.records import Reply
from servers import openai_server
from servers.fixtures import evaluate_model, fast_retries, records  # noqa: F401

VARIABLE = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"
QUESTION = "Which clip is louder? Answer 'A' for the first clip or 'B' for the second clip."


def test_replies_cut_at_the_token_limit_are_truncated_never_scored(fast_retries, tiny_pack, tmp_path):
    with openai_server.serve(model_ids=["mistralai/Voxtral-Mini-3B-2507"], finish="length") as server:
        fast_retries.setenv(VARIABLE, server.url)
        result = evaluate_model("Voxtral-Mini-3B", tiny_pack, tmp_path / "results")
    got = records(result.run_dir)
    assert got and all(r["finish_reason"] == "length" and r["status"] == "truncated" for r in got)
    assert all(r["chosen"] is None and r["correct"] is not True for r in got)  # a letter alone, cut: never credited
    assert all(any("cut by the token limit" in note for note in r["notes"]) for r in got)
    metrics = json.loads((result.run_dir / "metrics.json").read_text())
    assert metrics["statuses"] == {"truncated": len(got)}
    assert metrics["scored"]["truncated"] == metrics["scored"]["n"] and metrics["scored"]["correct"] == 0
    assert metrics["scored"]["truncation_rate"] == 1.0


def test_replies_that_stopped_carry_their_finish_reason(fast_retries, tiny_pack, tmp_path):
    with openai_server.serve(model_ids=["mistralai/Voxtral-Mini-3B-2507"]) as server:
        fast_retries.setenv(VARIABLE, server.url)
        result = evaluate_model("Voxtral-Mini-3B", tiny_pack, tmp_path / "results", max_samples=3)
    assert [(r["finish_reason"], r["status"]) for r in records(result.run_dir)] == [("stop", "answered")] * 3


def test_the_rules_read_only_what_was_finished_before_the_cut():
    assert extract_choice(QUESTION, "A", cut=True).status == "unparsed"  # may be 'A piano ...'
    assert extract_choice(QUESTION, "A", cut=False).chosen == "A"
    cut = "Answer: B.\nThe second clip is louder because its level is"
    assert extract_choice(QUESTION, cut, cut=True).chosen == "B"
    reasoning = "The first clip seems quiet. So the answer is A. But wait, the second clip is"
    assert extract_choice(QUESTION, reasoning, cut=True).status == "unparsed"  # second thoughts before the cut


def test_the_llm_judge_is_told_the_answer_was_cut():
    cut, whole = messages_for(QUESTION, "So far: A", cut=True), messages_for(QUESTION, "So far: A")
    assert CUT_MARK in cut[1]["content"] and CUT_MARK not in whole[1]["content"]
    assert "cut off by a token limit" in cut[0]["content"]


def test_a_rules_judge_reads_the_cut_from_the_reply():
    judge = Judge("rules")
    assert asyncio.run(judge.judge(QUESTION, Reply(text="B", finish_reason="length"))).status == "unparsed"
    assert asyncio.run(judge.judge(QUESTION, Reply(text="B", finish_reason="stop"))).chosen == "B"


def test_gemini_max_tokens_is_a_cut_reply():
    from google.genai import types

    from acousticbench.models.gemini import reply_from
    from acousticbench.core.records import was_cut

    response = types.GenerateContentResponse.model_validate(
        {"candidates": [{"content": {"parts": [{"text": "The answer is"}], "role": "model"},
                         "finishReason": "MAX_TOKENS"}], "modelVersion": "gemini-x"})
    reply = reply_from(response, [])
    assert reply.finish_reason == "MAX_TOKENS" and was_cut(reply.finish_reason)
