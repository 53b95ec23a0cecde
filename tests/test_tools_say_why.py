"""The tools name what they refuse or why they fail: compare names the runs a pattern matched when it wants two,
promoting two runs of one seed names both and writes nothing, and a sweep whose table says '0 failed' but exits 1
says why beside it."""
from __future__ import annotations

from conftest import write_tiny_pack
from harness_cli import harness_env, python, run_cli, run_dirs
from servers import openai_server
from servers.fixtures import question_keys
from servers.local import FaultPlan

VARIABLE = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"


def test_compare_given_more_than_two_runs_names_them(tmp_path):
    paths = [str(tmp_path / f"M-rad-seed42-2026120{i}") for i in range(3)]  # what results/M-rad-seed42-* expands to
    out = python("-m", "acousticbench", "compare", *paths, cwd=tmp_path)
    assert out.returncode == 2
    assert "got 3: " + ", ".join(paths) in out.stderr, out.stderr


def test_promoting_two_runs_of_one_seed_names_both_and_writes_nothing(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 8)
    for _ in range(2):
        assert run_cli("--model", "Oracle", "--task", "rad", "--seed", "42", "--archive", str(archive),
                       cwd=tmp_path).returncode == 0
    first, second = sorted(run_dirs(tmp_path / "results"))
    out = run_cli("--promote-reference", str(first), str(second), "--references", str(tmp_path / "refs"), cwd=tmp_path)
    assert out.returncode == 2
    assert str(first) in out.stderr and str(second) in out.stderr and "one run per seed" in out.stderr, out.stderr
    assert not (tmp_path / "refs").exists() or not any((tmp_path / "refs").rglob("*.jsonl"))


def test_a_sweep_that_finished_every_run_but_exits_1_says_why_beside_its_table(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 8)
    plan = FaultPlan(by_key={question_keys(archive)["rad_0002"]: ["400"] * 2})  # one failure a seed: 1 of 11
    with openai_server.serve(plan) as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--seeds", "1,2",
                      "--max-error-rate", "0.05", "--archive", str(archive), cwd=tmp_path,
                      env=harness_env(**{VARIABLE: server.url}))
    assert out.returncode == 1, out.stderr
    assert "Sweep: 2 runs, 2 finished, 0 failed" in out.stdout
    assert out.stdout.rstrip().endswith("Exit status 1: 2 runs finished over the error budget (--max-error-rate) "
                                        "(the error lines above name each)."), out.stdout[-400:]
