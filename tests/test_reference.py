"""Reference trajectories, paired run comparison and the leaderboard, as a user runs them."""
from __future__ import annotations

import json

import pytest

from harness_cli import run_cli, run_dirs, script


@pytest.fixture
def promoted(tiny_pack, tmp_path):
    """Random on the tiny pack with seeds 42 and 43, promoted into ./reference_trajectories."""
    assert run_cli("--model", "Random", "--task", "rad", "--seeds", "42,43", "--archive", str(tiny_pack),
                   cwd=tmp_path).returncode == 0
    out = run_cli("--promote-reference", *map(str, run_dirs(tmp_path / "results")), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return tmp_path / "reference_trajectories" / "Random" / "rad"


def test_promote_writes_runs_by_seed_and_a_summary(promoted):
    summary = json.loads((promoted / "summary.json").read_text())
    assert [(r["seed"], r["file"], r["n"]) for r in summary["runs"]] == [(42, "run_1.jsonl", 11), (43, "run_2.jsonl", 11)]
    assert summary["mean_accuracy"] == pytest.approx(sum(r["accuracy"] for r in summary["runs"]) / 2)
    assert summary["archive_manifest_sha256"] and summary["split"] == "all"


def test_a_run_of_another_split_is_never_promoted_beside_the_references_it_would_mix_with(promoted, tiny_pack,
                                                                                         tmp_path):
    """The split is AcousticBench's facet of a run: the reference's summary holds it, and a run on another split is
    refused with the facet named, the folder left as it was."""
    before = (promoted / "summary.json").read_text()
    assert run_cli("--model", "Random", "--task", "rad", "--seed", "44", "--split", "eval", "--archive", str(tiny_pack),
                   cwd=tmp_path).returncode == 0
    out = run_cli("--promote-reference", str(run_dirs(tmp_path / "results")[-1]), cwd=tmp_path)
    assert out.returncode == 2
    assert "holds runs with split/max-samples/archive all/None/" in out.stderr and "this run has eval/None/" in out.stderr
    assert (promoted / "summary.json").read_text() == before


def test_compare_reference_matches_and_reports_a_changed_answer(promoted, tiny_pack, tmp_path):
    args = ("--model", "Random", "--task", "rad", "--seed", "43", "--archive", str(tiny_pack), "--compare-reference")
    out = run_cli(*args, "--max-samples", "10", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Reference comparison: 10/10 (100.0%) match (reference_trajectories/Random/rad/run_2.jsonl)" in out.stdout

    lines = (promoted / "run_2.jsonl").read_text().splitlines()
    changed = json.loads(lines[4])
    changed["chosen"] = "B" if changed["chosen"] == "A" else "A"
    lines[4] = json.dumps(changed)
    (promoted / "run_2.jsonl").write_text("\n".join(lines) + "\n")
    out = run_cli(*args, cwd=tmp_path)
    assert out.returncode == 1
    assert "Reference comparison: 10/11 (90.9%) match" in out.stdout
    latest = run_dirs(tmp_path / "results")[-1]
    comparison = json.loads((latest / "comparison.json").read_text())
    assert [m["id"] for m in comparison["mismatches"]] == [changed["id"]]
    assert run_cli(*args, "--reference-tolerance", "90", cwd=tmp_path).returncode == 0


def test_missing_reference_says_what_exists(promoted, tiny_pack, tmp_path):
    out = run_cli("--model", "Random", "--task", "rad", "--seed", "44", "--archive", str(tiny_pack),
                  "--compare-reference", cwd=tmp_path)
    assert out.returncode == 2 and "seeds 42, 43" in out.stderr
    out = run_cli("--model", "Always-A", "--task", "rad", "--archive", str(tiny_pack), "--compare-reference", cwd=tmp_path)
    assert out.returncode == 2 and "references exist for Random" in out.stderr


def test_compare_runs_prints_flips_and_p_value(tiny_pack, tmp_path):
    for model in ("Always-A", "Random"):
        assert run_cli("--model", model, "--task", "rad", "--archive", str(tiny_pack), cwd=tmp_path).returncode == 0
    a, b = run_dirs(tmp_path / "results")  # Always-A first
    out = script("compare_runs.py", str(a), str(b / "responses.jsonl"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    random_chosen = [json.loads(line)["chosen"] for line in (b / "responses.jsonl").read_text().splitlines()]
    assert f"Agreement on chosen: {random_chosen.count('A')}/11" in out.stdout
    assert f"A -> B: {random_chosen.count('B')}" in out.stdout and "McNemar exact test" in out.stdout


def test_leaderboard_skips_unfinished_runs_with_a_reason(tiny_pack, tmp_path):
    assert run_cli("--model", "Random", "--task", "rad", "--seeds", "1,2", "--archive", str(tiny_pack),
                   cwd=tmp_path).returncode == 0
    first, second = run_dirs(tmp_path / "results")
    (second / "metrics.json").unlink()
    out = script("leaderboard.py", str(tmp_path / "results"), cwd=tmp_path)
    assert out.returncode == 0
    assert "| Random | all |" in out.stdout and "| 1 |" in out.stdout  # one seed left
    assert "no metrics.json" in out.stderr
    text = (first / "responses.jsonl").read_text()
    (first / "responses.jsonl").write_text(text[: len(text) // 2])
    out = script("leaderboard.py", str(tmp_path / "results"), cwd=tmp_path)
    assert out.returncode == 2 and "truncated" in out.stderr
