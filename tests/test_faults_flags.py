"""Every flag either takes effect or is refused: flags that cannot take effect together are one line naming them,
exit 2, before anything is read, asked or written."""
from __future__ import annotations

import pytest

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli
from test_faults import assert_one_line, snapshot

RUN = ("--model", "Oracle", "--task", "rad", "--judge", "rules", "--max-samples", "2")
CASES = {  # name: (flags, what the line says)
    "--zip without --build-archive": (("--zip", "pack.zip", "--list-tasks"),
                                      "--zip takes effect only with --build-archive"),
    "--out without --report": (("--out", "r.html", "--list-models"), "--out takes effect only with --report"),
    "--embed-audio with a run": ((*RUN, "--embed-audio"), "--embed-audio takes effect only with --report"),
    "two commands": (("--list-tasks", "--verify-checksums"), "--list-tasks and --verify-checksums are two commands"),
    "a report and a promotion": (("--report", "--promote-reference", "results/x"), "are two commands"),
    "--seed with --verify-checksums": (("--verify-checksums", "--task", "rad", "--seed", "43"),
                                       "--seed has no effect on --verify-checksums"),
    "--judge with --report": (("--report", "--judge", "llm"), "--judge has no effect on --report"),
    "--max-samples with --build-archive": (("--build-archive", "--max-samples", "3"),
                                           "--max-samples has no effect on --build-archive"),
    "--resume with --list-models": (("--list-models", "--resume"), "--resume has no effect on --list-models"),
    "--shots with --build-audioicl": (("--build-audioicl", "--shots", "3"), "--shots has no effect on --build-audioicl"),
    "--model with --report": ((*RUN, "--report"), "--report is a command of its own and runs no model"),
    "--reference-tolerance without --compare-reference": ((*RUN, "--reference-tolerance", "90"),
                                                         "--reference-tolerance takes effect only with --compare-reference"),
    "--references without --compare-reference": ((*RUN, "--references", "refs"),
                                                 "--references takes effect only with --compare-reference"),
    "--resume with --dry-run": ((*RUN, "--resume", "--dry-run"), "--resume has no effect on a --dry-run"),
    "--compare-reference with --dry-run": ((*RUN, "--compare-reference", "--dry-run"),
                                           "--compare-reference has no effect on a --dry-run"),
    "--max-error-rate with --dry-run": ((*RUN, "--max-error-rate", "0.5", "--dry-run"),
                                        "--max-error-rate has no effect on a --dry-run"),
    "--endpoint for a model computed here": ((*RUN, "--endpoint", "http://127.0.0.1:8000"),
                                            "--endpoint has no effect on Oracle, which talks to no server"),
    "--api-model for two local models": (("--model", "Random,Always-A", "--task", "rad", "--api-model", "gpt-x"),
                                         "--api-model has no effect on Random, Always-A, which talk to no server"),
    "--judge-model with --judge rules": ((*RUN, "--judge-model", "gpt-4.1"),
                                         "--judge-model has no effect with --judge rules"),
    "--judge-endpoint with --judge logprobs": (("--model", "Oracle", "--task", "rad", "--judge", "logprobs",
                                                "--judge-endpoint", "http://127.0.0.1:9/v1"),
                                               "--judge-endpoint has no effect with --judge logprobs"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_flags_that_cannot_both_take_effect_are_one_line(case, tmp_path):
    flags, needle = CASES[case]
    archive = write_tiny_pack(tmp_path / "archive")
    before = snapshot(tmp_path)
    out = run_cli(*flags, "--archive", str(archive), cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, needle)
    assert snapshot(tmp_path) == before and not (tmp_path / "results").exists() and not out.stdout


def test_the_flags_that_go_together_still_work(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    out = run_cli(*RUN, "--archive", str(archive), "--dry-run", "--concurrency", "3", cwd=tmp_path, env=harness_env())
    assert out.returncode == 0, out.stderr
    assert run_cli(*RUN, "--archive", str(archive), cwd=tmp_path, env=harness_env()).returncode == 0
    out = run_cli("--report", "--out", "r.html", "--embed-audio", cwd=tmp_path, env=harness_env())
    assert out.returncode == 0 and (tmp_path / "r.html").is_file(), out.stderr
    out = run_cli("--verify-checksums", "--task", "rad", "--archive", str(archive), cwd=tmp_path, env=harness_env())
    assert out.returncode == 0, out.stderr


def test_a_leaderboard_with_a_references_folder_that_is_not_there_is_refused(tmp_path):
    from harness_cli import script

    archive = write_tiny_pack(tmp_path / "archive")
    assert run_cli(*RUN, "--archive", str(archive), cwd=tmp_path, env=harness_env()).returncode == 0
    out = script("leaderboard.py", "results", "--references", "refs", cwd=tmp_path)
    assert_one_line(out, 2, "--references refs is not a folder")
    assert not out.stdout  # never a table that silently left the references out


@pytest.mark.slow  # two runs and an AudioICL pack per case; the inner loop keeps the command-line refusals
@pytest.mark.parametrize("tool, flags, task, line", [
    ("rejudge", ("--scoring", "lenient"), "rad", "--scoring applies to AudioICL runs, and none of the files given is one"),
    ("rerun", ("--model", "Oracle", "--judge", "rules"), "AudioCount",
     "--judge applies to AcousticBench runs, and none of the files given is one"),
])
def test_a_benchmarks_option_on_rerun_or_rejudge_without_its_runs_is_refused(tool, flags, task, line, tmp_path):
    import shutil
    import subprocess
    import sys

    from audioicl_pack import reduced_pack
    from harness_cli import REPO, run_dirs

    archive = write_tiny_pack(tmp_path / "archive")
    shutil.copytree(reduced_pack() / "audioicl", archive / "audioicl")
    assert run_cli("--model", "Oracle", "--task", task, "--max-samples", "2", "--archive", str(archive),
                   *(("--shots", "1") if task == "AudioCount" else ("--judge", "rules")), cwd=tmp_path).returncode == 0
    (run_dir,) = run_dirs(tmp_path / "results")
    before = snapshot(tmp_path / "results")
    out = subprocess.run([sys.executable, "-m", "acousticbench", tool, *flags, str(run_dir)], cwd=tmp_path,
                         capture_output=True, text=True, env=harness_env(PYTHONPATH=str(REPO)), timeout=60)
    assert_one_line(out, 2, line)
    assert snapshot(tmp_path / "results") == before
