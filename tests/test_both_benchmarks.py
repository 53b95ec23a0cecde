"""One harness for both benchmarks: every tool a user runs on results/ works on AcousticBench and AudioICL runs alike."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from audioicl_pack import reduced_pack
from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, script

SWEEP = ("--model", "Oracle,Random", "--task", "rad,AudioCount,MorseCode", "--shots", "1,3", "--seeds", "42,43",
         "--max-samples", "4", "--judge", "rules")


def run_dir(results: Path, prefix: str) -> Path:
    [found] = [p for p in results.iterdir() if p.name.startswith(prefix)]
    return found


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A folder holding a pack of both benchmarks and results/ of a sweep over both, with two models."""
    root = tmp_path_factory.mktemp("both")
    archive = write_tiny_pack(root / "archive", "rad", 8)
    shutil.copytree(reduced_pack() / "audioicl", archive / "audioicl")
    out = run_cli(*SWEEP, "--archive", str(archive), cwd=root)
    assert out.returncode == 0, out.stderr
    assert "Sweep: 20 runs, 20 finished, 0 failed" in out.stdout
    return root


def test_the_sweep_wrote_a_folder_per_run_naming_its_benchmark(workspace):
    configs = [json.loads(p.read_text()) for p in (workspace / "results").glob("*/config.json")]
    assert len(configs) == 20
    assert {c["benchmark"] for c in configs} == {"AcousticBench", "AudioICL"}
    for path in (workspace / "results").glob("*/responses.jsonl"):
        config = json.loads((path.parent / "config.json").read_text())
        assert {json.loads(line)["benchmark"] for line in path.read_text().splitlines()} == {config["benchmark"]}


def test_leaderboard_has_a_section_per_benchmark(workspace):
    out = script("leaderboard.py", "results", cwd=workspace)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "## AcousticBench" in out.stdout and "## AudioICL" in out.stdout
    assert "| Oracle [first 4] | all | " in out.stdout and "| Random [first 4] | all | " in out.stdout
    # two seeds of the same 4 episodes are worth 4 episodes: the interval is one seed's (exact: under 100 episodes),
    # not 8 answers'
    assert "| Oracle [first 4] | AudioCount | 3 | 100.0 ± 0.0 [39.8, 100.0] | 2 | 8 | 0.0 | 0.0 | 0.0 |" in out.stdout
    # Random answers one of the task's labels (no episode left without an answer); its seeds differ, so 8 answers
    # are worth more than 4 episodes
    assert "| Random [first 4] | AudioCount | 1 | 12.5 ± 17.7 [0.3, 52.7] | 2 | 8 | 0.0 | 0.0 | 0.0 |" in out.stdout
    csv = script("leaderboard.py", "results", "--csv", cwd=workspace)
    assert csv.returncode == 0 and "AudioICL,Oracle [first 4],all,AudioCount,1,1.000000,0.000000,2,8" in csv.stdout


@pytest.mark.parametrize("a, b, what", [("Oracle-AudioCount-k3-local-seed42", "Random-AudioCount-k3-local-seed42", "Episodes"),
                                        ("Oracle-rad-local-seed42", "Random-rad-local-seed42", "Questions")])
def test_compare_runs_on_either_benchmark(workspace, a, b, what):
    results = workspace / "results"
    out = script("compare_runs.py", str(run_dir(results, a)), str(run_dir(results, b)), cwd=workspace)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert f"{what} in both runs: 4" in out.stdout and "McNemar exact test" in out.stdout


def test_compare_runs_refuses_two_benchmarks(workspace):
    results = workspace / "results"
    out = script("compare_runs.py", str(run_dir(results, "Oracle-rad-local-seed42")),
                 str(run_dir(results, "Oracle-AudioCount-k1-local-seed42")), cwd=workspace)
    assert out.returncode == 2 and "AcousticBench run" in out.stderr and "AudioICL run" in out.stderr


def test_rerun_nones_and_rejudge_on_either_benchmark(workspace, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(workspace / "results", results)
    icl = run_dir(results, "Random-AudioCount-k1-local-seed42")
    out = script("rerun_nones.py", "--model", "Random", "--max-retries", "1", "--include", "unparsed", str(icl),
                 cwd=workspace)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    # Random answers one of the task's labels, so no episode is left without an answer and none is asked again
    assert "answered 4 -> 4" in out.stdout and "null answers 0 -> 0" in out.stdout
    assert [json.loads(line)["attempts"] for line in (icl / "responses.jsonl").read_text().splitlines()] == [1] * 4
    out = script("rejudge.py", "--scoring", "lenient", str(run_dir(results, "Oracle-AudioCount-k1-local-seed42")),
                 cwd=workspace)
    assert out.returncode == 0 and "null answers 0 -> 0" in out.stdout, out.stderr
    ab = run_dir(results, "Random-rad-local-seed43")
    out = script("rerun_nones.py", "--model", "Random", "--judge", "rules", str(ab), cwd=workspace)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    out = script("rejudge.py", "--judge-endpoint", "http://127.0.0.1:9/v1", str(ab), cwd=workspace)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr


def test_promote_then_compare_reference_on_either_benchmark(workspace, tmp_path):
    results = workspace / "results"
    runs = [str(p) for p in results.iterdir() if p.name.startswith(("Oracle-rad-", "Oracle-AudioCount-k3-"))]
    out = run_cli("--promote-reference", *runs, "--references", str(tmp_path / "refs"), cwd=workspace)
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "refs" / "Oracle" / "AudioCount" / "k3" / "summary.json").read_text())
    assert summary["benchmark"] == "AudioICL" and [r["seed"] for r in summary["runs"]] == [42, 43]
    out = run_cli("--model", "Oracle", "--task", "rad,AudioCount", "--shots", "3", "--seeds", "42,43", "--max-samples",
                  "4", "--judge", "rules", "--archive", "archive", "--results-dir", str(tmp_path / "again"),
                  "--compare-reference", "--references", str(tmp_path / "refs"), cwd=workspace)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("Reference comparison: 4/4 (100.0%) match") == 4
    assert f"({tmp_path / 'refs'}/Oracle/AudioCount/k3/run_2.jsonl)" in out.stdout


@pytest.mark.parametrize("first, second, setting", [
    (("--task", "rad", "--judge", "rules", "--split", "all"), ("--task", "rad", "--judge", "rules", "--split", "eval"),
     "split 'all' -> 'eval'"),
    (("--task", "AudioCount", "--shots", "1"), ("--task", "AudioCount", "--shots", "1", "--prompt-style", "none"),
     "prompt_style 'specific' -> 'none'"),
])
def test_resume_refuses_other_settings_on_either_benchmark(workspace, tmp_path, first, second, setting):
    common = ("--model", "Oracle", "--max-samples", "2", "--archive", str(workspace / "archive"))
    assert run_cli(*common, *first, cwd=tmp_path).returncode == 0
    before = sorted(p.name for p in (tmp_path / "results").iterdir())
    out = run_cli(*common, *second, "--resume", cwd=tmp_path)
    assert out.returncode == 2 and setting in out.stderr and "Traceback" not in out.stderr
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == before


def test_resume_with_no_earlier_run_says_so(workspace, tmp_path):
    out = run_cli("--model", "Oracle", "--task", "rad", "--max-samples", "2", "--judge", "rules", "--resume",
                  "--archive", str(workspace / "archive"), cwd=tmp_path)
    assert out.returncode == 0 and "no earlier run of Oracle on rad (seed 42)" in out.stderr


def test_a_failed_model_is_reported_without_losing_the_others(workspace, tmp_path):
    out = run_cli("--model", "Voxtral-Mini-3B,Oracle", "--task", "rad", "--max-samples", "2", "--judge", "rules",
                  "--endpoint", "http://127.0.0.1:9", "--archive", str(workspace / "archive"), cwd=tmp_path,
                  env=harness_env(ACOUSTICBENCH_CONNECT_WAIT="0.5"))
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "error: Voxtral-Mini-3B on rad (seed 42) stopped: no server at http://127.0.0.1:9" in out.stderr
    assert "Oracle on rad (seed 42): accuracy" in out.stdout and "Sweep: 2 runs, 1 finished, 1 failed" in out.stdout
