"""The judge inside a run: --judge llm through a local judge server, and auto without a judge key."""
from __future__ import annotations

import json

from servers import openai_server
from servers.fixtures import harness_env, run_cli
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
    (run_dir,) = (tmp_path / "results").iterdir()
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
    (run_dir,) = (tmp_path / "results").iterdir()
    config = json.loads((run_dir / "config.json").read_text())["judge"]
    assert config["requested"] == "auto" and config["mode"] == "rules" and "rejudge.py" in config["note"]


def test_a_judge_that_gives_no_verdict_leaves_the_answer_unparsed_and_says_why(tiny_pack, tmp_path):
    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"))
    with JudgeServer(default=lambda request: malformed()) as judge:
        out = run_cli("--model", "Always-A", "--task", "rad", "--archive", str(tiny_pack), "--max-samples", "2",
                      "--judge", "llm", "--judge-endpoint", judge.url, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    (run_dir,) = (tmp_path / "results").iterdir()
    lines = [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert [(r["status"], r["chosen"], r["judge"]["method"]) for r in lines] == [("unparsed", None, "none")] * 2
    assert all(r["error"].startswith("judge failed:") for r in lines)
