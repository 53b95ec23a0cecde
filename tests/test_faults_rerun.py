"""rerun_nones.py asks again with the run's own settings, over real HTTP on 127.0.0.1: the answers it adds come from
the model id the run asked for, never from the server's default model mixed into the run."""
from __future__ import annotations

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs, script
from servers import openai_server
from servers.fixtures import records
from servers.local import FaultPlan
from test_faults import VARIABLE, assert_one_line

MODELS = ["local/served-model", "local/other-model"]  # the first is what the server serves when not asked


def test_rerun_asks_the_model_id_the_run_asked_for(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve(FaultPlan(always="400"), model_ids=MODELS) as failing:
        first = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--max-samples", "3",
                        "--api-model", "local/other-model", "--archive", str(archive), cwd=tmp_path,
                        env=harness_env(**{VARIABLE: failing.url}))
    (run_dir,) = run_dirs(tmp_path / "results")
    assert first.returncode == 1 and {r["status"] for r in records(run_dir)} == {"error"}, first.stderr
    with openai_server.serve(model_ids=MODELS) as server:
        out = script("rerun_nones.py", "--model", "Voxtral-Mini-3B", str(run_dir), cwd=tmp_path,
                     env=harness_env(**{VARIABLE: server.url}))
        asked = {r.body.get("model") for r in server.received if r.path == "/v1/chat/completions"}
    assert out.returncode == 0, out.stderr
    assert asked == {"local/other-model"}
    assert all(r["status"] == "answered" and "re-asked by rerun_nones.py: was error" in r["notes"]
               for r in records(run_dir))


def test_rerun_refuses_an_endpoint_for_a_model_that_talks_to_no_server(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    first = run_cli("--model", "Oracle", "--task", "rad", "--judge", "rules", "--max-samples", "2", "--archive",
                    str(archive), cwd=tmp_path, env=harness_env())
    assert first.returncode == 0, first.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    before = (run_dir / "responses.jsonl").read_bytes()
    out = script("rerun_nones.py", "--model", "Oracle", "--endpoint", "http://127.0.0.1:9", str(run_dir), cwd=tmp_path)
    assert_one_line(out, 2, "--endpoint has no effect on Oracle")
    assert (run_dir / "responses.jsonl").read_bytes() == before and not (run_dir / "responses.jsonl.orig").exists()
