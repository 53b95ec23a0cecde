"""The run path as a user drives it: `python run.py --model M --task T ...` and the run folder it writes."""
from __future__ import annotations

import json
from pathlib import Path

from harness_cli import run_cli, run_dirs

RECORD_FIELDS = {"id", "benchmark", "task", "split", "kind", "model", "seed", "prompt", "audio", "response", "chosen",
                 "answer", "correct", "status", "error", "attempts", "latency_s", "usage", "judge", "logprobs", "meta",
                 "notes", "finish_reason", "human", "sent", "audio_tokens"}


def only_run_dir(results: Path) -> Path:
    (run_dir,) = run_dirs(results)
    return run_dir


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_run_writes_the_run_folder(tiny_pack, tmp_path):
    out = run_cli("--model", "Always-A", "--task", "rad", "--max-samples", "3", "--seed", "7",
                  "--archive", str(tiny_pack), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    run_dir = only_run_dir(tmp_path / "results")
    assert run_dir.name.startswith("Always-A-rad-local-seed7-")
    records = lines(run_dir / "responses.jsonl")
    assert [r["id"] for r in records] == ["rad_0001", "rad_0002", "rad_0003"]
    assert set(records[0]) == RECORD_FIELDS
    assert [(r["response"], r["chosen"], r["correct"], r["status"]) for r in records] == [
        ("A", "A", True, "answered"), ("A", "A", False, "answered"), ("A", "A", True, "answered")]
    assert records[0]["judge"] == {"method": "rules", "model": None}
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["scored"]["n"] == 3 and metrics["scored"]["accuracy"] == 2 / 3
    config = json.loads((run_dir / "config.json").read_text())
    assert config["spec"]["seed"] == 7 and config["archive"]["manifest_sha256"]
    assert "accuracy 0.667" in out.stdout and str(run_dir.name) in out.stdout


def test_random_is_reproducible_and_depends_on_seed(tiny_pack, tmp_path):
    def chosen(seed: str, results: str) -> list[str]:
        assert run_cli("--model", "Random", "--task", "rad", "--seed", seed, "--archive", str(tiny_pack),
                       "--results-dir", results, "--concurrency", "5", cwd=tmp_path).returncode == 0
        return [r["chosen"] for r in lines(only_run_dir(tmp_path / results) / "responses.jsonl")]

    first, again, other = chosen("42", "a"), chosen("42", "b"), chosen("43", "c")
    assert first == again
    assert first != other


def test_split_seeds_and_diagnostics(tiny_pack, tmp_path):
    out = run_cli("--model", "Always-A", "--task", "rad", "--seeds", "1,2", "--split", "train",
                  "--archive", str(tiny_pack), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    runs = run_dirs(tmp_path / "results")
    assert [r.name.split("-seed")[1][0] for r in runs] == ["1", "2"]
    records = lines(runs[0] / "responses.jsonl")
    assert {r["split"] for r in records} == {"train"}
    metrics = json.loads((runs[0] / "metrics.json").read_text())
    assert set(metrics["by_split"]) == {"train"}
    assert metrics["diagnostics"]["identical_p_a"] is None or metrics["diagnostics"]["identical_p_a"] == 1.0


def test_dry_run_renders_prompts_and_writes_nothing(tiny_pack, tmp_path):
    out = run_cli("--model", "Oracle", "--task", "rad", "--max-samples", "2", "--dry-run",
                  "--archive", str(tiny_pack), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "rad_0001: You will hear two audio clips" in out.stdout and "rad_0003" not in out.stdout
    assert not (tmp_path / "results").exists()


def test_resume_after_a_kill_keeps_every_question_once(tiny_pack, tmp_path):
    args = ("--model", "Random", "--task", "rad", "--archive", str(tiny_pack))
    assert run_cli(*args, cwd=tmp_path).returncode == 0
    run_dir = only_run_dir(tmp_path / "results")
    full = (run_dir / "responses.jsonl").read_text().splitlines()
    # what a kill mid-write leaves: two finished lines and a torn third
    (run_dir / "responses.jsonl").write_text(full[0] + "\n" + full[1] + "\n" + full[2][: len(full[2]) // 2])
    out = run_cli(*args, "--resume", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "2 kept from the earlier run" in out.stdout
    assert only_run_dir(tmp_path / "results") == run_dir
    def without_latency(text_lines):
        return [{k: v for k, v in json.loads(line).items() if k != "latency_s"} for line in text_lines]

    assert without_latency((run_dir / "responses.jsonl").read_text().splitlines()) == without_latency(full)
