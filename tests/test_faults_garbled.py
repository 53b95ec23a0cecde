"""A server whose reply is not HTTP at all (a garbled status line, as a broken proxy sends), on 127.0.0.1, for every
backend that talks HTTP: each question is asked again and then an error record naming it, never a traceback."""
from __future__ import annotations

import pytest

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs
from servers import gemini_server, openai_server
from servers.fixtures import records
from servers.local import FaultPlan
from test_faults import VARIABLE, assert_one_line

MODELS = {  # model -> its server, and the environment that points the model at it
    "Voxtral-Mini-3B": (openai_server, lambda url: {VARIABLE: url}),
    "GPT-Audio-Mini": (openai_server, lambda url: {"OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_BASE_URL": url + "/v1"}),
    "Gemini-3-Flash": (gemini_server, lambda url: {"GEMINI_API_KEY": "test-0123456789", "GOOGLE_GEMINI_BASE_URL": url}),
}


@pytest.mark.parametrize("model", list(MODELS))
def test_a_reply_that_is_not_http_is_an_error_record_after_its_retries(model, tmp_path):
    module, env = MODELS[model]
    archive = write_tiny_pack(tmp_path / "archive")
    with module.serve(FaultPlan(always="garbled")) as server:
        out = run_cli("--model", model, "--task", "rad", "--judge", "rules", "--max-samples", "3", "--archive",
                      str(archive), cwd=tmp_path,
                      env=harness_env(**env(server.url), ACOUSTICBENCH_MAX_ATTEMPTS="2"))
        asked = len(server.received)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    rows = records(run_dir)
    assert len(rows) == 3 and asked == 6
    assert all(r["status"] == "error" and r["attempts"] == 2 and "127.0.0.1" in r["error"] for r in rows), rows


def test_a_gemini_server_whose_answers_are_not_its_json_is_one_line_naming_it(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with gemini_server.serve(prefix=b"\xef\xbb\xbf") as server:  # a byte order mark the SDK cannot read past
        out = run_cli("--model", "Gemini-3-Flash", "--task", "rad", "--judge", "rules", "--archive", str(archive),
                      cwd=tmp_path, env=harness_env(**MODELS["Gemini-3-Flash"][1](server.url)))
    assert_one_line(out, 2, f"{server.url} sent Gemini-3-Flash an answer that is not Gemini's JSON",
                    "GOOGLE_GEMINI_BASE_URL")
    assert "cannot reach" not in out.stderr and not (tmp_path / "results").exists()
