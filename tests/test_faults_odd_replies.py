"""Replies as servers other than OpenAI's send them, over real HTTP on 127.0.0.1: a token limit's cut in any letter
case or vendor's word is a cut reply, never scored; an answer the server itself broke off is asked again and, when it
never finishes, an error record, never an answer; a chat completion labelled with another content type is read."""
from __future__ import annotations

import pytest

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs
from servers import openai_server
from servers.fixtures import records
from test_faults import VARIABLE
from test_faults_replies import served_run

CUT = ["Length", "LENGTH", "model_length", "max_output_tokens", " length "]


@pytest.mark.parametrize("finish", CUT)
def test_a_token_limit_cut_in_another_spelling_is_never_scored(finish, tmp_path):
    out, (run_dir,) = served_run(tmp_path, finish=finish)
    assert out.returncode == 0, out.stderr
    rows = records(run_dir)
    assert {(r["status"], r["finish_reason"], r["chosen"], r["correct"]) for r in rows} == {
        ("truncated", finish, None, False)}  # as OpenAI's "length": its letter is not taken, and it is never right


@pytest.mark.parametrize("finish", ["error", "abort", "ERROR"])
def test_an_answer_the_server_broke_off_is_asked_again_and_never_scored(finish, tmp_path):
    out, (run_dir,) = served_run(tmp_path, finish=finish)
    rows = records(run_dir)
    assert out.returncode == 1 and "--max-error-rate" in out.stderr, out.stderr
    assert all(r["status"] == "error" and r["attempts"] == 2 and r["chosen"] is None for r in rows)
    assert all(f"finish_reason {finish!r}" in r["error"] for r in rows)


CONTENT_TYPES = ["text/plain", "application/octet-stream", "text/html; charset=utf-8"]


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
@pytest.mark.parametrize("model", ["Voxtral-Mini-3B", "GPT-Audio-Mini"])
def test_a_chat_completion_labelled_as_another_content_type_is_read_as_what_it_is(model, content_type, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(content_type=content_type) as server:
        env = {VARIABLE: server.url} if model == "Voxtral-Mini-3B" else {
            "OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_BASE_URL": server.url + "/v1"}
        out = run_cli("--model", model, "--task", "rad", "--judge", "rules", "--max-samples", "3", "--archive",
                      str(archive), cwd=tmp_path, env=harness_env(**env))
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    assert [r["status"] for r in records(run_dir)] == ["answered"] * 3


VERDICT = '{"label": "B", "refused": false, "reason": "it names the second clip"}'
JUDGE_REPLIES = {  # what a judge server that does not enforce the JSON schema sends -> the label read from it
    "in a json fence": ("```json\n" + VERDICT + "\n```", "B"),
    "after a byte order mark": ("\ufeff" + VERDICT, "B"),
    "after a sentence": ("Here is the verdict: " + VERDICT, "B"),
    "the label in lower case": (VERDICT.replace('"B"', '"b"'), "B"),
    "refused as a word": ('{"label": "none", "refused": "true", "reason": "no audio"}', None),
    "no reason": ('{"label": "B", "refused": false}', "B"),
    "no label at all": ('{"refused": false, "reason": "hmm"}', "no verdict"),
    "a label that is no option": (VERDICT.replace('"B"', '"C"'), "no verdict"),
}


@pytest.mark.parametrize("case", list(JUDGE_REPLIES))
def test_a_judge_verdict_sent_without_the_schema_is_read_for_what_it_says(case):
    import asyncio

    from acousticbench.benchmarks.acoustic.judge.llm import JudgeFailed, LLMJudge
    from servers.judge_server import Canned, JudgeServer

    content, label = JUDGE_REPLIES[case]

    async def judged(url: str):
        judge = LLMJudge("local-judge", url, max_attempts=1)
        try:
            return await judge.judge("Which clip is louder?\nA. The first\nB. The second", f"I think {case}")
        except JudgeFailed:
            return "no verdict"
        finally:
            await judge.aclose()

    with JudgeServer(default=lambda request: Canned(body={"content": content})) as server:
        got = asyncio.run(judged(server.url))
    if label == "no verdict":
        assert got == "no verdict"
    else:
        assert (got.chosen, got.method) == (label, "llm")
        assert got.status == ("answered" if label else "refused")
