"""The judge inside a run: --judge llm through a local judge server, and auto without a judge key."""
from __future__ import annotations

import json

from harness_cli import harness_env, python, run_cli, run_dirs
from servers import openai_server
from servers.judge_server import JudgeServer, malformed, verdict


def test_judge_llm_labels_every_answer_and_is_recorded(tiny_pack, tmp_path):
    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"))
    out = run_cli("--model", "Always-A", "--task", "rad", "--archive", str(tiny_pack), "--judge", "llm",
                  cwd=tmp_path, env=env)
    assert out.returncode == 2 and "OPENAI_API_KEY" in out.stderr
    assert not (tmp_path / "results").exists()

    with JudgeServer(default=lambda request: verdict("A")) as judge:
        out = run_cli("--model", "Always-A", "--task", "rad", "--archive", str(tiny_pack), "--judge", "llm",
                      "--judge-endpoint", judge.url, "--judge-model", "my-judge", cwd=tmp_path, env=env)
        assert {r["model"] for r in judge.requests} == {"my-judge"}
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    lines = [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert {(r["chosen"], r["judge"]["method"], r["judge"]["model"]) for r in lines} == {("A", "llm", "my-judge")}
    config = json.loads((run_dir / "config.json").read_text())["judge"]
    assert config["mode"] == "llm" and config["endpoint"] == judge.url and len(config["prompt_sha256"]) == 64
    assert json.loads((run_dir / "metrics.json").read_text())["judge_methods"] == {"llm": 11}


def test_judge_auto_without_a_key_leaves_unreadable_answers_unparsed_and_says_so(tiny_pack, tmp_path):
    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"))
    with openai_server.serve(answer_text="Hard to say.") as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(tiny_pack), "--max-samples", "3",
                      cwd=tmp_path, env={**env, "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT": server.url})
    assert out.returncode == 0, out.stderr
    assert "3 unparsed" in out.stdout and "scripts/rejudge.py" in out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    config = json.loads((run_dir / "config.json").read_text())["judge"]
    assert config["requested"] == "auto" and config["mode"] == "rules" and "rejudge.py" in config["note"]


def test_a_dead_judge_stops_the_run_before_any_model_call(tiny_pack, tmp_path):
    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"), ACOUSTICBENCH_RETRY_BASE_DELAY="0")
    with openai_server.serve() as model, JudgeServer(default=lambda request: malformed()) as judge:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(tiny_pack), "--judge", "llm",
                      "--judge-endpoint", judge.url, cwd=tmp_path,
                      env={**env, "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT": model.url})
        asked = [r for r in model.received if r.path.endswith("/chat/completions")]
    assert out.returncode == 2 and asked == [] and "Traceback" not in out.stderr
    warning, error = out.stderr.splitlines()  # the judge model's shutdown notice (from the probe), then the error
    assert warning.startswith("warning: judge model gpt-4o-mini") and "--judge-model" in warning
    assert f"the LLM judge gpt-4o-mini at {judge.url} gave no verdict" in error
    assert not (tmp_path / "results").exists()
    out = run_cli("--model", "Always-A", "--task", "rad", "--archive", str(tiny_pack), "--judge", "llm",
                  "--judge-endpoint", "http://127.0.0.1:9/v1", cwd=tmp_path, env=env)
    assert out.returncode == 2 and "judge endpoint http://127.0.0.1:9/v1 unreachable" in out.stderr


def test_a_retired_judge_model_stops_the_run_with_its_own_message_before_any_model_call(tiny_pack, tmp_path):
    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"), OPENAI_API_KEY="sk-test")
    argv = ["--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(tiny_pack), "--judge", "llm"]
    code = ("import sys; import acousticbench.benchmarks.acoustic.judge.retirement as r; r.SHUTDOWNS = {'gpt-4o-mini': '2000-01-01'}; "
            f"from acousticbench.cli import main; sys.exit(main({argv!r}))")  # run.py with the judge shut down
    with openai_server.serve() as model:
        out = python("-c", code, cwd=tmp_path, env={**env, "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT": model.url})
        asked = [r for r in model.received if r.path.endswith("/chat/completions")]
    assert out.returncode == 2 and asked == [] and "Traceback" not in out.stderr
    assert "judge model gpt-4o-mini was shut down by OpenAI on 2000-01-01" in out.stderr and "--judge-model" in out.stderr
    assert "gave no verdict" not in out.stderr
    assert not (tmp_path / "results").exists()


def test_a_judge_that_gives_no_verdict_is_an_error_that_counts_against_the_budget(tiny_pack, tmp_path):
    from acousticbench.benchmarks.acoustic.judge.llm import PROBE_ANSWER

    def only_the_probe(request):  # a judge that answers the pre-run probe, then fails on every real answer
        return verdict("A") if PROBE_ANSWER in request["messages"][-1]["content"] else malformed()

    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"))
    with JudgeServer(default=only_the_probe) as judge:
        out = run_cli("--model", "Always-A", "--task", "rad", "--archive", str(tiny_pack), "--max-samples", "2",
                      "--judge", "llm", "--judge-endpoint", judge.url, cwd=tmp_path, env=env)
    assert out.returncode == 1 and "2 errors; 2 of all 2 errors the judge's" in out.stdout
    assert "finished with 2 of 2 failed (100.0%), over --max-error-rate 10%" in out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    lines = [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert [(r["status"], r["chosen"], r["judge"]["method"]) for r in lines] == [("error", None, "none")] * 2
    assert all(r["error"].startswith("judge failed:") and r["response"] for r in lines)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["error_causes"] == {"judge": 2} and metrics["scored"]["error_rate"] == 1.0
