"""rerun_nones.py and rejudge.py on finished runs with null answers, against local servers."""
from __future__ import annotations

import json
from pathlib import Path

from harness_cli import harness_env, python, run_cli, run_dirs, script
from servers import openai_server
from servers.fixtures import question_keys
from servers.judge_server import JudgeServer, verdict
from servers.local import FaultPlan, answer_for

VARIABLE = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"


def records(run_dir: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, (run_dir / "responses.jsonl").read_text().splitlines())}


def first_run(tiny_pack: Path, tmp_path: Path, env: dict, plan: FaultPlan | None = None, **options) -> Path:
    with openai_server.serve(plan, **options) as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(tiny_pack),
                      "--max-error-rate", "1", cwd=tmp_path, env={**env, VARIABLE: server.url})
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    return run_dir


def test_rerun_nones_asks_again_errors_then_what_include_names_keeps_a_backup_and_a_history(tiny_pack, tmp_path):
    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"))
    keys = question_keys(tiny_pack)
    failing = {keys["rad_0002"]: ["400"], keys["rad_0005"]: ["refusal"]}
    run_dir = first_run(tiny_pack, tmp_path, env, FaultPlan(by_key=failing))
    before = records(run_dir)
    assert (before["rad_0002"]["status"], before["rad_0005"]["status"]) == ("error", "refused")
    original = (run_dir / "responses.jsonl").read_text()

    with openai_server.serve() as server:  # by default only the error is asked again, not the refusal
        out = script("rerun_nones.py", "--model", "Voxtral-Mini-3B", "--max-retries", "2", str(run_dir),
                     cwd=tmp_path, env={**env, VARIABLE: server.url})
        asked = sorted(r.key for r in server.received if r.path.endswith("/chat/completions"))
    assert out.returncode == 0, out.stderr
    assert asked == [keys["rad_0002"]] and "error 1 -> 0" in out.stdout and "refused 1 -> 1" in out.stdout
    with openai_server.serve() as server:
        out = script("rerun_nones.py", "--model", "Voxtral-Mini-3B", "--include", "refused", str(run_dir),
                     cwd=tmp_path, env={**env, VARIABLE: server.url})
        asked = sorted(r.key for r in server.received if r.path.endswith("/chat/completions"))
    assert out.returncode == 0, out.stderr
    assert asked == [keys["rad_0005"]] and "refused 1 -> 0" in out.stdout and "null answers 1 -> 0" in out.stdout
    after = records(run_dir)
    for qid in ("rad_0002", "rad_0005"):
        assert after[qid]["chosen"] == answer_for(keys[qid]) and after[qid]["status"] == "answered"
        assert after[qid]["attempts"] == before[qid]["attempts"] + 1
        assert after[qid]["notes"][-1] == f"re-asked by rerun_nones.py: was {before[qid]['status']}"
    history = json.loads((run_dir / "config.json").read_text())["history"]
    assert [(h["what"], h["changed"]) for h in history] == [("rerun_nones.py: asked again", 1)] * 2
    assert "--include refused" in history[1]["command"]
    assert {k: v for k, v in after.items() if k not in ("rad_0002", "rad_0005")} == {
        k: v for k, v in before.items() if k not in ("rad_0002", "rad_0005")}
    assert (run_dir / "responses.jsonl.orig").read_text() == original
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["statuses"].get("error", 0) == 0 and metrics["statuses"].get("refused", 0) == 0

    with openai_server.serve() as server:  # nothing is null any more: a second run asks nothing
        again = script("rerun_nones.py", "--model", "Voxtral-Mini-3B", str(run_dir), cwd=tmp_path,
                       env={**env, VARIABLE: server.url})
        assert [r for r in server.received if r.path.endswith("/chat/completions")] == []
    assert again.returncode == 0, again.stderr
    assert records(run_dir) == after
    assert (run_dir / "responses.jsonl.orig").read_text() == original  # the first original is never overwritten


def test_rejudge_labels_unparsed_answers_through_the_llm_judge_once(tiny_pack, tmp_path):
    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"))
    run_dir = first_run(tiny_pack, tmp_path, env, answer_text="I lean towards the second clip.")
    assert {r["status"] for r in records(run_dir).values()} == {"unparsed"}

    with JudgeServer(default=lambda request: verdict("B")) as judge:
        out = script("rejudge.py", str(run_dir / "responses.jsonl"), "--judge-endpoint", judge.url,
                     cwd=tmp_path, env=env)
        first_calls = len(judge.requests)
    assert out.returncode == 0, out.stderr
    # the 11 answers are one text to one question text: the judge reads it once, the cache answers the rest
    assert first_calls == 1 and "unparsed 11 -> 0" in out.stdout
    after = records(run_dir)
    assert {(r["chosen"], r["judge"]["method"], r["judge"]["model"]) for r in after.values()} == {("B", "llm", "gpt-4o-mini")}
    assert all(r["correct"] == (r["answer"] == "B") for r in after.values() if r["answer"])
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["judge_methods"] == {"llm": 11}

    with JudgeServer(default=lambda request: verdict("A")) as judge:  # a second run changes nothing
        again = script("rejudge.py", str(run_dir), "--judge-endpoint", judge.url, cwd=tmp_path, env=env)
        assert judge.requests == []
    assert again.returncode == 0 and records(run_dir) == after


def test_rejudge_without_a_judge_is_one_clear_line(tiny_pack, tmp_path):
    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"))
    run_dir = first_run(tiny_pack, tmp_path, env, answer_text="no idea")
    out = script("rejudge.py", str(run_dir), cwd=tmp_path, env=env)
    assert out.returncode == 2 and "OPENAI_API_KEY" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert not (run_dir / "responses.jsonl.orig").exists()


def test_rerun_judges_with_the_runs_own_judge_unless_told_and_the_history_and_row_name_another(tiny_pack, tmp_path):
    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"))
    with openai_server.serve(answer_text="I lean towards the second clip.") as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(tiny_pack), "--judge", "rules",
                      "--seeds", "42,43", cwd=tmp_path, env={**env, VARIABLE: server.url})
    assert out.returncode == 0, out.stderr
    run_dir, _ = sorted(run_dirs(tmp_path / "results"))  # seed 42's; seed 43's stays as the rules judged it
    with JudgeServer(default=lambda request: verdict("B")) as judge, \
            openai_server.serve(answer_text="I lean towards the second clip.") as server:
        told = {**env, VARIABLE: server.url, "ACOUSTICBENCH_JUDGE_ENDPOINT": judge.url}  # an LLM judge is at hand
        own = script("rerun_nones.py", "--model", "Voxtral-Mini-3B", "--include", "unparsed", "--max-retries", "1",
                     str(run_dir), cwd=tmp_path, env=told)
        assert own.returncode == 0, own.stderr
        assert judge.requests == []  # the run's own judge, the rules: the LLM judge is never asked
        assert {(r["status"], r["judge"]["method"]) for r in records(run_dir).values()} == {("unparsed", "none")}
        history = json.loads((run_dir / "config.json").read_text())["history"]
        assert history[-1]["what"] == "rerun_nones.py: asked again" and "settings" not in history[-1]
        other = script("rerun_nones.py", "--model", "Voxtral-Mini-3B", "--include", "unparsed", "--max-retries", "1",
                       "--judge", "llm", str(run_dir), cwd=tmp_path, env=told)
        assert other.returncode == 0, other.stderr
        assert judge.requests  # told: the LLM judge labels what is asked again, and each record says so
    assert {(r["chosen"], r["judge"]["method"], r["judge"]["model"]) for r in records(run_dir).values()} == {
        ("B", "llm", "gpt-4o-mini")}
    config = json.loads((run_dir / "config.json").read_text())
    assert config["history"][-1]["what"] == "rerun_nones.py: asked again, judge llm"
    assert config["history"][-1]["settings"] == {"judge": "llm"}
    board = python("-m", "acousticbench", "leaderboard", str(tmp_path / "results"), cwd=tmp_path, env=env)
    assert board.returncode == 0, board.stderr
    rows = [line for line in board.stdout.splitlines() if line.startswith("| Voxtral")]
    assert len(rows) == 2 and any("the llm judge of a rerun" in row for row in rows), board.stdout  # never pooled
