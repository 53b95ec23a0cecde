"""Hostile bodies from a server, over real HTTP on 127.0.0.1: a body nested past any reader's depth from /v1/models,
/tokenize or a chat completion, or a reply that is not UTF-8, is one line or an error record of that question,
never a traceback and never an answer; answers a redirect sent elsewhere need attention (exit 1)."""
from __future__ import annotations

import json

import pytest

from conftest import write_tiny_pack
from harness_cli import assert_one_line, harness_env, run_cli, run_dirs, script
from servers import openai_server
from servers.fixtures import records
from servers.judge_server import JudgeServer
from test_faults import VARIABLE

VOXTRAL = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--max-samples", "3")
DEEP = b"[" * 200_000 + b"]" * 200_000  # deeper than Python's recursion limit lets json.loads go
DEEP_OBJECT = b'{"a":' * 200_000 + b"1" + b"}" * 200_000


def served(tmp_path, *flags: str, **options):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(**options) as server:
        out = run_cli(*VOXTRAL, "--archive", str(archive), *flags, cwd=tmp_path,
                      env=harness_env(**{VARIABLE: server.url, "ACOUSTICBENCH_MAX_ATTEMPTS": "2"}))
    return out, run_dirs(tmp_path / "results")


@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT, b'{"object": "list", "data": ' + DEEP + b"}"],
                         ids=["a deep list", "a deep object", "a deep list inside"])
def test_a_deeply_nested_model_listing_is_one_line(body, tmp_path):
    out, folders = served(tmp_path, raw_bodies={"/v1/models": body})
    assert_one_line(out, 2, "/v1/models")
    assert folders == []


def test_a_deeply_nested_tokenize_answer_leaves_the_template_unknown_and_the_run_goes_on(tmp_path):
    out, (run_dir,) = served(tmp_path, raw_bodies={"/tokenize": DEEP}, version="0.32.0")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert [r["status"] for r in records(run_dir)] == ["answered"] * 3
    assert "chat_template_render_sha256" not in json.dumps(json.loads((run_dir / "config.json").read_text()))


def env_for(model: str, url: str) -> dict:
    return {VARIABLE: url} if model == "Voxtral-Mini-3B" else {
        "OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_BASE_URL": url + "/v1"}


@pytest.mark.parametrize("model", ["Voxtral-Mini-3B", "GPT-Audio-Mini"])
@pytest.mark.parametrize("body", [DEEP, b'{"id": "x", "choices": ' + DEEP + b"}"], ids=["a deep list", "deep choices"])
def test_a_deeply_nested_chat_completion_is_asked_again_then_an_error_record(body, model, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(reply_shape=lambda c: body) as server:
        out = run_cli(*VOXTRAL[:1], model, *VOXTRAL[2:], "--archive", str(archive), "--max-error-rate", "1",
                      cwd=tmp_path, env=harness_env(**env_for(model, server.url), ACOUSTICBENCH_MAX_ATTEMPTS="2"))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    rows = records(run_dir)
    assert len(rows) == 3 and all(r["status"] == "error" and r["attempts"] == 2 for r in rows), rows
    assert all("nested" in r["error"] for r in rows), [r["error"] for r in rows]


@pytest.mark.parametrize("model", ["Voxtral-Mini-3B", "GPT-Audio-Mini"])
def test_a_reply_that_is_not_utf8_is_never_an_answer(model, tmp_path):
    def latin1(completion: dict) -> bytes:  # "B, é" in Latin-1: the letter is there, the bytes are no UTF-8
        letter = completion["choices"][0]["message"]["content"]
        return json.dumps(completion).encode().replace(f'"content": "{letter}"'.encode(),
                                                       f'"content": "{letter}, '.encode() + b'\xe9t\xe9"')
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(reply_shape=latin1) as server:
        out = run_cli(*VOXTRAL[:1], model, *VOXTRAL[2:], "--archive", str(archive), cwd=tmp_path,
                      env=harness_env(**env_for(model, server.url)))
    assert "Traceback" not in out.stderr, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    rows = records(run_dir)
    assert len(rows) == 3 and all(r["status"] in ("unparsed", "error") and r["chosen"] is None for r in rows), rows
    assert all(r["correct"] is not True for r in rows)
    said = [" ".join(r["notes"]) + (r["error"] or "") for r in rows]
    assert all("utf-8" in words.lower() for words in said), said
    with JudgeServer() as judge:  # nor does a judge asked again later take a letter from it
        done = script("rejudge.py", str(run_dir), "--judge-endpoint", judge.url, cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert all(r["chosen"] is None for r in records(run_dir))


def test_answers_a_redirect_sent_to_another_origin_need_attention(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve() as real, openai_server.serve(
            redirect_to=real.url, redirect_paths=("/v1/chat/completions",), redirect_after=1) as front:
        out = run_cli(*VOXTRAL, "--archive", str(archive), cwd=tmp_path, env=harness_env(**{VARIABLE: front.url}))
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert f"was answered by {real.url}" in out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    assert [r["status"] for r in records(run_dir)] == ["answered"] * 3  # the answers are kept, and flagged


def test_a_judge_whose_verdict_is_nested_past_any_depth_labels_nothing_and_says_so(tiny_pack, tmp_path):
    from servers.judge_server import Canned, JudgeServer, verdict

    deep = Canned(body='{"id": "x", "choices": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with JudgeServer(default=lambda request: deep) as judge:
        judge.script.append(verdict("A"))  # the probe before the run is answered as a judge should
        out = run_cli("--model", "Always-A", "--task", "rad", "--max-samples", "3", "--archive", str(tiny_pack),
                      "--judge", "llm", "--judge-endpoint", judge.url, cwd=tmp_path,
                      env=harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"), ACOUSTICBENCH_MAX_ATTEMPTS="2"))
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    (run_dir,) = run_dirs(tmp_path / "results")
    rows = records(run_dir)
    assert len(rows) == 3 and all(r["chosen"] is None for r in rows), rows
    assert all("nested deeper" in r["error"] for r in rows), [r["error"] for r in rows]  # asked again, said plainly
