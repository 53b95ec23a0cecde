"""Commands that must lose and hide nothing: a runaway reply is cut at a stated size with a note, a reply from
another model is noted, a stalled response ends within a stated deadline, and AudioICL summaries accumulate."""
from __future__ import annotations

import json
import time

from conftest import write_tiny_pack
from servers import openai_server
from harness_cli import harness_env, run_cli, run_dirs, summary_rows
from servers.fixtures import records
from servers.local import FaultPlan
from test_faults import VARIABLE, assert_one_line

VOXTRAL = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--max-samples", "3")


def served_run(tmp_path, plan=None, env=None, **options):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(plan, **options) as server:
        out = run_cli(*VOXTRAL, "--archive", str(archive), "--max-error-rate", "1", cwd=tmp_path,
                      env=harness_env(**{VARIABLE: server.url, **(env or {})}))
    return out, run_dirs(tmp_path / "results")


def test_a_runaway_reply_is_stored_up_to_the_cap_with_a_note(tmp_path):
    out, (run_dir,) = served_run(tmp_path, answer_text="A" + " and so on" * 500_000)  # 5 MB each
    assert out.returncode == 0, out.stderr
    for record in records(run_dir):
        assert len(record["response"]) == 65_536
        assert "reply cut to its first 65536 of 5000001 characters (ACOUSTICBENCH_MAX_REPLY_CHARS)" in record["notes"]
    assert (run_dir / "responses.jsonl").stat().st_size < 3 * 70_000  # the cap holds on disk too


def test_the_reply_cap_is_a_setting(tmp_path):
    out, (run_dir,) = served_run(tmp_path, env={"ACOUSTICBENCH_MAX_REPLY_CHARS": "1000"}, answer_text="B" * 5000)
    assert out.returncode == 0, out.stderr
    assert {len(r["response"]) for r in records(run_dir)} == {1000}


def test_a_reply_from_another_model_is_noted_on_the_record(tmp_path):
    out, (run_dir,) = served_run(tmp_path, reply_model="someone/else-7b")
    assert out.returncode == 0, out.stderr
    note = "the server answered as model 'someone/else-7b', not 'local/served-model' as asked"
    assert all(note in r["notes"] for r in records(run_dir))


def test_a_reply_naming_the_asked_model_has_no_note(tmp_path):
    out, (run_dir,) = served_run(tmp_path)
    assert out.returncode == 0 and all(not any("answered as model" in n for n in r["notes"]) for r in records(run_dir))


def test_a_server_that_sends_headers_and_then_nothing_holds_a_question_for_attempts_times_the_deadline(tmp_path):
    started = time.monotonic()
    out, (run_dir,) = served_run(tmp_path, FaultPlan(always="stall"), slow_s=6,
                                 env={"ACOUSTICBENCH_STALL_TIMEOUT": "1", "ACOUSTICBENCH_MAX_ATTEMPTS": "2"})
    assert out.returncode == 0, out.stderr
    errors = [r for r in records(run_dir) if r["status"] == "error"]
    assert len(errors) == 3 and all(r["attempts"] == 2 for r in errors)
    assert all("sent headers and then not the whole answer within 1 s (ACOUSTICBENCH_STALL_TIMEOUT)" in r["error"]
               for r in errors)
    assert time.monotonic() - started < 30  # 2 attempts x 1 s each, in parallel; the stall itself lasts 6 s


def test_a_stall_with_the_run_stopping_on_errors_is_one_line(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 20)
    with openai_server.serve(FaultPlan(always="stall"), slow_s=4) as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--archive", str(archive),
                      "--concurrency", "16", cwd=tmp_path,
                      env=harness_env(**{VARIABLE: server.url, "ACOUSTICBENCH_STALL_TIMEOUT": "0.5",
                                         "ACOUSTICBENCH_MAX_ATTEMPTS": "1"}))
    assert_one_line(out, 1, "stopped:", "ACOUSTICBENCH_STALL_TIMEOUT")


def test_audioicl_summaries_accumulate_across_commands(tmp_path):
    from audioicl_pack import reduced_pack

    archive = reduced_pack()
    for extra in (("--task", "AudioCount"), ("--task", "AudioLength", "--prompt-style", "general"),
                  ("--task", "AudioCount", "--scoring", "lenient")):
        out = run_cli("--model", "Oracle", "--shots", "1", "--max-samples", "2", "--archive", str(archive), *extra,
                      cwd=tmp_path, env=harness_env())
        assert out.returncode == 0, out.stderr
    rows = {(r["task"], r["prompt_style"], r["scoring"]): r["n"] for r in summary_rows(tmp_path / "results")}
    assert rows == {("AudioCount", "specific", "strict"): "2", ("AudioLength", "general", "strict"): "2",
                    ("AudioCount", "specific", "lenient"): "2"}
    assert json.loads(next((tmp_path / "results").glob("*AudioLength*/metrics.json")).read_text())["n"] == 2
