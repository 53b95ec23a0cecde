"""Servers that begin redirecting to another origin in the middle of a run, on 127.0.0.1, for every backend that talks
HTTP and for the LLM judge: the move is said once on stderr, each answer that came from elsewhere says so on its
record, and config.json names every origin the answers (and verdicts) came from."""
from __future__ import annotations

import json

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs, script
from servers import gemini_server, openai_server
from servers.fixtures import records
from servers.judge_server import JudgeServer, verdict
from test_faults import VARIABLE

SIX = ("--task", "rad", "--max-samples", "6")
OPENAI_KEY = {"OPENAI_API_KEY": "sk-test-0123456789"}
GEMINI_KEY = {"GEMINI_API_KEY": "test-key-0123456789"}


def run(tmp_path, model: str, env: dict, *flags: str):
    flags = flags or ("--judge", "rules")
    archive = write_tiny_pack(tmp_path / "archive")
    out = run_cli("--model", model, *SIX, *flags, "--archive", str(archive), cwd=tmp_path, env=harness_env(**env))
    config = json.loads(next(iter(run_dirs(tmp_path / "results"))).joinpath("config.json").read_text())
    moved = config["backend"].get("answered_from") or config["backend"].get("redirected")
    assert out.returncode == (1 if moved else 0), out.stderr  # answers from another origin need attention
    if moved:
        assert f"warning: {model}" in out.stderr and "check that it serves the model you mean" in out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    return out, run_dir, config


def assert_moved_mid_run(out, run_dir, config: dict, front: str, real: str) -> None:
    """Two answers came from the endpoint given, four from where it then sent them: one line, four notes."""
    said = [line for line in out.stderr.splitlines() if "redirected" in line and real in line]
    assert len(said) == 1 and said[0].startswith(f"note: {front}"), out.stderr
    note = f"answered by {real}: {front} redirected the request there"
    rows = records(run_dir)
    assert sorted(note in r["notes"] for r in rows) == [False] * 2 + [True] * 4
    assert all(r["status"] == "answered" for r in rows)
    assert config["backend"]["answered_from"] == [real]


def test_a_served_model_whose_server_starts_redirecting_mid_run(tmp_path):
    with openai_server.serve() as real, openai_server.serve(
            redirect_to=real.url, redirect_paths=("/v1/chat/completions",), redirect_after=2) as front:
        out, run_dir, config = run(tmp_path, "Voxtral-Mini-3B", {VARIABLE: front.url})
    assert_moved_mid_run(out, run_dir, config, front.url, real.url)
    assert config["backend"]["endpoints"] == [front.url]


def test_an_openai_sdk_model_whose_server_starts_redirecting_mid_run(tmp_path):
    with openai_server.serve() as real, openai_server.serve(
            redirect_to=real.url, redirect_paths=("/v1/chat/completions",), redirect_after=2) as front:
        out, run_dir, config = run(tmp_path, "GPT-Audio-Mini", {**OPENAI_KEY, "OPENAI_BASE_URL": front.url + "/v1"})
        answered_by_real = sum(r.path == "/v1/chat/completions" for r in real.received)
    assert_moved_mid_run(out, run_dir, config, front.url + "/v1", real.url)
    assert answered_by_real == 4 and config["backend"]["endpoint"] == front.url + "/v1"


def test_an_openai_sdk_model_whose_server_moved_before_the_run_is_followed(tmp_path):
    with openai_server.serve() as real, openai_server.serve(redirect_to=real.url) as front:
        out, run_dir, config = run(tmp_path, "GPT-Audio-Mini", {**OPENAI_KEY, "OPENAI_BASE_URL": front.url + "/v1"})
        asked_front = [r.path for r in front.received]
    assert f"note: {front.url}/v1 redirects GPT-Audio-Mini's requests to {real.url}/v1" in out.stderr
    assert config["backend"]["endpoint"] == real.url + "/v1"
    assert config["backend"]["redirected"] == {front.url + "/v1": real.url + "/v1"}
    assert not asked_front and len(records(run_dir)) == 6  # every question went straight to where it was sent


def test_a_gemini_model_whose_server_starts_redirecting_mid_run(tmp_path):
    with gemini_server.serve() as real, gemini_server.serve(
            redirect_to=real.url, redirect_paths=(":generateContent",), redirect_after=2) as front:
        out, run_dir, config = run(tmp_path, "Gemini-3-Flash", {**GEMINI_KEY, "GOOGLE_GEMINI_BASE_URL": front.url})
    assert_moved_mid_run(out, run_dir, config, front.url, real.url)
    assert config["backend"]["endpoint"] == front.url


def test_a_gemini_model_whose_server_moved_before_the_run_is_followed(tmp_path):
    with gemini_server.serve() as real, gemini_server.serve(redirect_to=real.url) as front:
        out, run_dir, config = run(tmp_path, "Gemini-3-Flash", {**GEMINI_KEY, "GOOGLE_GEMINI_BASE_URL": front.url})
        asked_front = len(front.received)
    assert f"note: {front.url} redirects Gemini-3-Flash's requests to {real.url}" in out.stderr
    assert config["backend"]["endpoint"] == real.url and config["backend"]["redirected"] == {front.url: real.url}
    assert asked_front == 0 and all(r["status"] == "answered" for r in records(run_dir))


def test_a_judge_endpoint_that_starts_redirecting_mid_run_is_named_in_config(tmp_path):
    with JudgeServer(default=lambda request: verdict("B")) as real, \
            JudgeServer(default=lambda request: verdict("B"), redirect_to=real.root, redirect_after=2) as front, \
            openai_server.serve(answer_text="clip {key} sounds like the second") as server:  # six answers to judge
        out, run_dir, config = run(tmp_path, "Voxtral-Mini-3B", {VARIABLE: server.url}, "--judge", "llm",
                                   "--judge-endpoint", front.url)
        verdicts_from_real = len(real.requests)
    said = [line for line in out.stderr.splitlines() if "redirected the LLM judge" in line]
    assert len(said) == 1 and said[0].startswith(f"note: {front.url} redirected") and real.root in said[0], out.stderr
    assert config["judge"]["endpoint"] == front.url and config["judge"]["answered_from"] == [real.root]
    assert verdicts_from_real == 5 and {(r["chosen"], r["judge"]["method"]) for r in records(run_dir)} == {("B", "llm")}


def test_rejudge_against_a_judge_endpoint_that_redirects_names_where_the_verdicts_came_from(tmp_path):
    with openai_server.serve(answer_text="clip {key} leaves me unsure") as server:
        _, run_dir, _ = run(tmp_path, "Voxtral-Mini-3B", {VARIABLE: server.url})
    assert {r["status"] for r in records(run_dir)} == {"unparsed"}
    with JudgeServer(default=lambda request: verdict("A")) as real, \
            JudgeServer(redirect_to=real.root) as front:
        out = script("rejudge.py", str(run_dir), "--judge-endpoint", front.url, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count(f"note: {front.url} redirected the LLM judge") == 1, out.stderr
    (entry,) = json.loads((run_dir / "config.json").read_text())["history"]
    assert entry["judge"]["endpoint"] == front.url and entry["judge"]["answered_from"] == [real.root]
    assert {r["chosen"] for r in records(run_dir)} == {"A"}
