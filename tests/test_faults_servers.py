"""Servers that say odd things about themselves, on 127.0.0.1: what config.json and the records say is where the
answers really came from (after a redirect), a model list the harness cannot trust is one line (exit 2, nothing
written), and a model a server refuses gets advice that can work."""
from __future__ import annotations

import json

import pytest

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs
from servers import gemini_server, openai_server
from servers.fixtures import records
from test_faults import VARIABLE, assert_one_line

VOXTRAL = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--max-samples", "3")


def test_a_server_redirecting_to_another_origin_is_named_where_the_answers_came_from(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve() as real, openai_server.serve(redirect_to=real.url) as front:
        out = run_cli(*VOXTRAL, "--archive", str(archive), cwd=tmp_path, env=harness_env(**{VARIABLE: front.url}))
        answered_by_real = sum(r.path == "/v1/chat/completions" for r in real.received)
    assert out.returncode == 1 and f"was answered by {real.url}" in out.stderr, out.stderr  # they need a look
    assert f"note: {front.url} redirects Voxtral-Mini-3B's requests to {real.url}" in out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    backend = json.loads((run_dir / "config.json").read_text())["backend"]
    assert backend["endpoints"] == [real.url] and backend["redirected"] == {front.url: real.url}
    assert answered_by_real == 3 and all(r["status"] == "answered" for r in records(run_dir))


def test_answers_redirected_one_by_one_say_so_on_each_record_and_in_config(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve() as real, \
            openai_server.serve(redirect_to=real.url, redirect_paths=("/v1/chat/completions",)) as front:
        out = run_cli(*VOXTRAL, "--archive", str(archive), cwd=tmp_path, env=harness_env(**{VARIABLE: front.url}))
    assert out.returncode == 1 and f"was answered by {real.url}" in out.stderr, out.stderr  # they need a look
    (run_dir,) = run_dirs(tmp_path / "results")
    note = f"answered by {real.url}: {front.url} redirected the request there"
    assert all(note in r["notes"] and r["status"] == "answered" for r in records(run_dir))
    backend = json.loads((run_dir / "config.json").read_text())["backend"]
    assert backend["endpoints"] == [front.url] and backend["answered_from"] == [real.url]


LISTINGS = {  # what /v1/models sends: the line names what is wrong with it
    "a null id": ([{"id": None, "object": "model"}], "lists a model without an id (entry 1 of 1"),
    "an empty id": ([{"id": "local/served-model"}, {"id": ""}], "lists a model without an id (entry 2 of 2"),
    "an id that is a number": ([{"id": 7}], "lists a model without an id"),
    "a model that is a string": (["local/served-model"], "lists a model without an id"),
    "data not a list": ({"id": "local/served-model"}, "is not a model list"),
}


@pytest.mark.parametrize("case", list(LISTINGS))
def test_a_model_list_the_harness_cannot_trust_is_one_line_before_anything_is_asked(case, tmp_path):
    listing, needle = LISTINGS[case]
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(listing=listing) as server:
        out = run_cli(*VOXTRAL, "--archive", str(archive), cwd=tmp_path, env=harness_env(**{VARIABLE: server.url}))
        asked = [r for r in server.received if r.path == "/v1/chat/completions"]
    assert_one_line(out, 2, f"{server.url}/v1/models", needle)
    assert not asked and not (tmp_path / "results").exists()


def test_gpt_audio_mini_refused_by_a_local_server_is_not_told_to_ask_for_itself(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(missing_models=["gpt-audio-mini"]) as server:
        out = run_cli("--model", "GPT-Audio-Mini", "--task", "rad", "--judge", "rules", "--archive", str(archive),
                      cwd=tmp_path, env=harness_env(OPENAI_API_KEY="sk-test-0123456789",
                                                    OPENAI_BASE_URL=server.url + "/v1"))
    assert_one_line(out, 2, f"the server at {server.url}/v1 (OPENAI_BASE_URL) does not serve 'gpt-audio-mini'",
                    "pass a model it serves with --api-model")
    assert "--api-model gpt-audio-mini" not in out.stderr and not (tmp_path / "results").exists()


ODD_GEMINI = {  # parts of a Gemini answer the SDK cannot read that the label does not need
    "usage a string": {"usageMetadata": "lots"},
    "a token count that is not a number": {"usageMetadata": {"promptTokenCount": "many"}},
    "model version a number": {"modelVersion": 3},
}


@pytest.mark.parametrize("case", list(ODD_GEMINI))
def test_a_gemini_answer_with_an_odd_part_the_label_does_not_need_is_an_answer(case, tmp_path):
    odd = ODD_GEMINI[case]
    run_dir = run_gemini(tmp_path, lambda original: lambda *args, **kwargs: {**original(*args, **kwargs), **odd})
    assert [r["status"] for r in records(run_dir)] == ["answered"] * 3


def test_a_gemini_answer_cut_before_any_text_is_truncated(tmp_path):
    run_dir = run_gemini(tmp_path, lambda original: lambda model, text, **kw: original(model, None, finish="MAX_TOKENS"))
    assert {(r["status"], r["finish_reason"]) for r in records(run_dir)} == {("truncated", "MAX_TOKENS")}


def run_gemini(tmp_path, reshape):
    """A three-question run of Gemini against our server answering through reshape(its own answer maker)."""
    archive = write_tiny_pack(tmp_path / "archive")
    original = gemini_server.generate_response
    gemini_server.generate_response = reshape(original)
    try:
        with gemini_server.serve() as server:
            out = run_cli("--model", "Gemini-3-Flash", "--task", "rad", "--judge", "rules", "--max-samples", "3",
                          "--archive", str(archive), cwd=tmp_path,
                          env=harness_env(GEMINI_API_KEY="test-key-0123456789", GOOGLE_GEMINI_BASE_URL=server.url))
    finally:
        gemini_server.generate_response = original
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    return run_dir
