"""Replies that are odd but valid, from a real server on 127.0.0.1: each becomes the record its words call for (an
answer, a refusal, a cut reply), any text is stored as sent and read back by every tool, and a reply with nothing to
score is an error record of that question alone, never the end of a run."""
from __future__ import annotations

import json

import pytest

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs, script
from servers import openai_server
from servers.fixtures import records
from test_faults import VARIABLE, assert_one_line

VOXTRAL = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--max-samples", "3")


def served_run(tmp_path, *flags: str, env: dict | None = None, **options):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(**options) as server:
        out = run_cli(*VOXTRAL, "--archive", str(archive), *flags, cwd=tmp_path,
                      env=harness_env(**{VARIABLE: server.url, "ACOUSTICBENCH_MAX_ATTEMPTS": "2", **(env or {})}))
    return out, run_dirs(tmp_path / "results")


def choice(completion: dict, **changes) -> dict:
    """The completion with its first choice changed."""
    return {**completion, "choices": [{**completion["choices"][0], **changes}]}


def message(completion: dict, **fields) -> dict:
    return choice(completion, message={"role": "assistant", **fields})


def letter(completion: dict) -> str:
    return completion["choices"][0]["message"]["content"]


ANSWERED = {  # a reply whose answer is there, whatever else about it is odd: answered, the letter read
    "usage null": lambda c: {**c, "usage": None},
    "usage a string": lambda c: {**c, "usage": "lots of tokens"},
    "usage a list": lambda c: {**c, "usage": [43, 1]},
    "usage details null": lambda c: {**c, "usage": {"prompt_tokens": 43, "prompt_tokens_details": None}},
    "fields nobody asked for": lambda c: {**choice(c, extra={"x": [1]}, stop_reason=None), "system_fingerprint": 7,
                                          "service_tier": {"tier": "flex"}, "prompt_logprobs": None},
    "content as a list of parts": lambda c: message(c, content=[{"type": "text", "text": letter(c)}]),
    "model id not a string": lambda c: {**c, "model": 7},
    "finish reason not a string": lambda c: choice(c, finish_reason=["stop"]),
    "logprobs a string": lambda c: choice(c, logprobs="n/a"),
    "logprobs content an object": lambda c: choice(c, logprobs={"content": {"0": {"token": "A"}}}),
    "logprobs alternatives not objects": lambda c: choice(c, logprobs={"content": [{"token": "A",
                                                                                   "top_logprobs": ["A", None]}]}),
    "refusal field empty beside an answer": lambda c: message(c, content=letter(c), refusal=""),
}


@pytest.mark.parametrize("case", list(ANSWERED))
def test_an_answer_with_odd_parts_around_it_is_an_answer(case, tmp_path):
    out, (run_dir,) = served_run(tmp_path, reply_shape=ANSWERED[case])
    assert out.returncode == 0, out.stderr
    rows = records(run_dir)
    assert [r["status"] for r in rows] == ["answered"] * 3 and all(r["chosen"] == r["response"] for r in rows)
    assert all(r["error"] is None and r["attempts"] == 1 for r in rows)


def test_usage_counts_written_as_floats_or_strings_are_kept(tmp_path):
    out, (run_dir,) = served_run(tmp_path, reply_shape=lambda c: {**c, "usage": {
        "prompt_tokens": 43.0, "completion_tokens": "1", "total_tokens": 44.5, "prompt_tokens_details": {"audio_tokens": 40.0}}})
    assert out.returncode == 0, out.stderr
    assert {json.dumps(r["usage"], sort_keys=True) for r in records(run_dir)} == {
        '{"completion_tokens": 1, "prompt_tokens": 43, "prompt_tokens_details.audio_tokens": 40}'}


REFUSED = {
    "content null and a refusal": lambda c: message(c, content=None, refusal="I can't help with that."),
    "a refusal object": lambda c: message(c, content=None, refusal={"reason": "I can't help with that."}),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refusal_in_any_shape_is_a_refusal(case, tmp_path):
    out, (run_dir,) = served_run(tmp_path, reply_shape=REFUSED[case])
    assert out.returncode == 0, out.stderr
    assert {(r["status"], r["response"], r["chosen"]) for r in records(run_dir)} == {
        ("refused", "I can't help with that.", None)}


def test_a_reply_the_token_limit_cut_before_any_text_is_truncated_not_an_error(tmp_path):
    out, (run_dir,) = served_run(tmp_path, reply_shape=lambda c: choice(
        message(c, content=None, reasoning_content="Let me think about the reverb"), finish_reason="length"))
    assert out.returncode == 0, out.stderr
    assert {(r["status"], r["response"], r["finish_reason"], r["error"]) for r in records(run_dir)} == {
        ("truncated", "", "length", None)}


def test_no_choices_is_an_error_record_of_those_questions_alone(tmp_path):
    # the server answers "A" questions with an empty choices list: only those fail, with the reason, once
    out, (run_dir,) = served_run(tmp_path, "--max-error-rate", "1",
                                 reply_shape=lambda c: {**c, "choices": []} if letter(c) == "A" else c)
    assert out.returncode == 0, out.stderr
    rows = records(run_dir)
    failed = [r for r in rows if r["status"] == "error"]
    assert failed and len(failed) < len(rows) and all(r["status"] == "answered" for r in rows if r not in failed)
    assert all("returned no choices" in r["error"] and r["attempts"] == 1 for r in failed)


def test_a_choice_that_is_not_an_object_is_asked_again_then_an_error_record(tmp_path):
    out, (run_dir,) = served_run(tmp_path, "--max-error-rate", "1", reply_shape=lambda c: {**c, "choices": [None]})
    assert out.returncode == 0, out.stderr
    rows = records(run_dir)
    assert {r["status"] for r in rows} == {"error"} and all(r["attempts"] == 2 for r in rows)
    assert all("not a chat completion (choices[0] is null" in r["error"] for r in rows)


TEXTS = {  # what a server may put in a reply's text: stored exactly, by json.loads of the record
    "a lone surrogate": "B \ud800 is my answer",
    "a NUL character": "B\x00",
    "a line separator and a BOM": "\ufeffB\u2028",
    "an astral character": "B \U0001f3b5",
}


@pytest.mark.parametrize("case", list(TEXTS))
def test_any_text_a_server_sends_is_stored_as_sent(case, tmp_path):
    text = TEXTS[case]
    out, (run_dir,) = served_run(tmp_path, answer_text=text)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    rows = records(run_dir)
    assert len(rows) == 3 and all(r["response"] == text for r in rows)
    (run_dir / "responses.jsonl").read_bytes().decode("utf-8")  # the file itself stays UTF-8


def test_bytes_that_are_not_utf8_are_kept_byte_for_byte_and_noted(tmp_path):
    sent = b" \xff\xfe\xc3 end"  # after the answer's letter, which the canary's probes need

    def raw(completion: dict) -> bytes:
        body = json.dumps(completion).encode()
        said = letter(completion).encode()
        return body.replace(b'"content": "' + said, b'"content": "' + said + sent)

    out, (run_dir,) = served_run(tmp_path, reply_shape=raw)
    assert out.returncode == 0, out.stderr
    for row in records(run_dir):
        assert row["response"].encode("utf-8", "surrogateescape") == row["response"][0].encode() + sent
        assert any("3 character(s) of the reply are not valid Unicode" in note for note in row["notes"])


def test_a_lone_surrogate_reply_is_read_back_by_every_tool(tmp_path):
    from servers.judge_server import JudgeServer

    out, (run_dir,) = served_run(tmp_path, answer_text="{letter}\n\ud83d")
    assert out.returncode == 0, out.stderr
    assert all(r["status"] == "answered" for r in records(run_dir))
    with JudgeServer() as judge:
        for done in (script("leaderboard.py", "results", cwd=tmp_path),
                     script("compare_runs.py", str(run_dir), str(run_dir), cwd=tmp_path),
                     run_cli("--report", "results", "--out", "r.html", cwd=tmp_path, env=harness_env()),
                     script("rejudge.py", str(run_dir), "--judge-endpoint", judge.url, cwd=tmp_path)):
            assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "\\ud83d" in (tmp_path / "r.html").read_text(encoding="utf-8")
    assert all(r["response"].endswith("\n\ud83d") for r in records(run_dir))  # rejudge kept it as it was


def test_a_sweep_goes_on_past_a_model_whose_replies_hold_invalid_unicode(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(answer_text="{letter} \udfff") as server:
        out = run_cli("--model", "Voxtral-Mini-3B,Oracle", "--task", "rad", "--judge", "rules", "--max-samples", "3",
                      "--archive", str(archive), cwd=tmp_path, env=harness_env(**{VARIABLE: server.url}))
    assert out.returncode == 0, out.stderr
    folders = run_dirs(tmp_path / "results")
    assert len(folders) == 2 and all(len(records(d)) == 3 and (d / "metrics.json").is_file() for d in folders)


def test_the_llm_judge_reads_a_reply_holding_invalid_unicode(tmp_path):
    from servers.judge_server import JudgeServer, verdict

    archive = write_tiny_pack(tmp_path / "archive")
    with JudgeServer(default=lambda request: verdict("B")) as judge, \
            openai_server.serve(answer_text="I would say \udc80 the second") as server:
        out = run_cli(*VOXTRAL, "--archive", str(archive), "--judge", "llm", "--judge-endpoint", judge.url,
                      cwd=tmp_path, env=harness_env(**{VARIABLE: server.url}))
        sent = [m["content"] for r in judge.requests for m in r["messages"] if m["role"] == "user"]
    assert out.returncode == 0, out.stderr
    assert {(r["status"], r["chosen"], r["judge"]["method"]) for r in records(run_dirs(tmp_path / "results")[0])} == {
        ("answered", "B", "llm")}
    answers = [text for text in sent if "I would say" in text]  # the others: the judge's probe before the run
    assert answers and all("I would say \ufffd the second" in text for text in answers)  # what a request can carry


def test_a_record_holding_a_raw_line_separator_is_one_record_to_every_tool(tmp_path):
    """As an older harness wrote it: U+2028 unescaped in a response; str.splitlines() would break the line there."""
    archive = write_tiny_pack(tmp_path / "archive")
    out = run_cli("--model", "Oracle", "--task", "rad", "--judge", "rules", "--seeds", "42,43", "--archive",
                  str(archive), cwd=tmp_path, env=harness_env())
    assert out.returncode == 0, out.stderr
    for run_dir in run_dirs(tmp_path / "results"):
        rows = records(run_dir)
        rows[0]["response"] = "A\u2028(first clip)"
        (run_dir / "responses.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    for done in (script("leaderboard.py", "results", cwd=tmp_path),
                 run_cli("--report", "results", "--out", "r.html", cwd=tmp_path, env=harness_env())):
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
