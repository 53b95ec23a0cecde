"""Damaged files around a run and commands that could lose or hide something: each is one line naming the file (no
traceback), and nothing is lost: a cut line is asked again or refused, never dropped; a run counts once."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli
from test_faults import RUN, assert_one_line, results_with_a_run, script, snapshot


def references_of(tmp_path: Path, run_dir: Path) -> Path:
    refs = tmp_path / "refs"
    out = run_cli("--promote-reference", str(run_dir), "--references", str(refs), cwd=tmp_path, env=harness_env())
    assert out.returncode == 0, out.stderr
    return refs / "Oracle" / "rad"


def summary_a_list(folder: Path) -> None:
    (folder / "summary.json").write_text(json.dumps([json.loads((folder / "summary.json").read_text())]))


def summary_without_seed(folder: Path) -> None:
    summary = json.loads((folder / "summary.json").read_text())
    del summary["runs"][0]["seed"]
    (folder / "summary.json").write_text(json.dumps(summary))


def summary_pointing_elsewhere(folder: Path) -> None:
    summary = json.loads((folder / "summary.json").read_text())
    summary["runs"][0]["file"] = "../../../results/run.jsonl"
    (folder / "summary.json").write_text(json.dumps(summary))


def reference_cut(folder: Path) -> None:
    path = folder / "run_1.jsonl"
    path.write_bytes(path.read_bytes()[:-40])


def reference_middle_damaged(folder: Path) -> None:
    path = folder / "run_1.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:3] + ["{oops\n"] + lines[3:]))


REFERENCE = {
    "summary a list": (summary_a_list, "the reference summary", "is not a JSON object"),
    "summary without a seed": (summary_without_seed, "the reference summary", "runs.0.seed: Field required"),
    "summary pointing elsewhere": (summary_pointing_elsewhere, "the reference summary", "runs.0.file"),
    "reference run cut": (reference_cut, "run_1.jsonl:11 (item rad_0011) is damaged (cut short by a crash)", ""),
    "reference run damaged": (reference_middle_damaged, "run_1.jsonl:4 is damaged", ""),
}


@pytest.mark.parametrize("case", list(REFERENCE))
def test_a_damaged_reference_is_one_line_before_the_run(case, tmp_path):
    damage, *needles = REFERENCE[case]
    archive, run_dir = results_with_a_run(tmp_path)
    damage(references_of(tmp_path, run_dir))
    before = snapshot(tmp_path)
    out = run_cli(*RUN, "--archive", str(archive), "--compare-reference", "--references", str(tmp_path / "refs"),
                  "--results-dir", "again", cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, *[n for n in needles if n])
    assert snapshot(tmp_path) == before and not (tmp_path / "again").exists()  # nothing was asked or written


def cut_last_line(run_dir: Path) -> str:
    path = run_dir / "responses.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:50])
    return json.loads(lines[-1])["id"]


def ids(run_dir: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (run_dir / "responses.jsonl").read_text().splitlines()]


def test_rerun_nones_asks_a_cut_question_again_and_keeps_every_question(tmp_path):
    archive, run_dir = results_with_a_run(tmp_path)
    every = ids(run_dir)
    cut = cut_last_line(run_dir)
    out = script("rerun_nones.py", "--model", "Oracle", str(run_dir), cwd=tmp_path)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.strip().splitlines() == [f"note: {run_dir / 'responses.jsonl'}:11 (item {cut}) was cut short by a "
                                               "crash: it is asked again (the backup keeps the file as it was)."]
    assert ids(run_dir) == every  # none dropped
    record = json.loads((run_dir / "responses.jsonl").read_text().splitlines()[-1])
    assert record["status"] == "answered" and "re-asked by rerun_nones.py: was a line cut short by a crash" in record["notes"]
    assert json.loads((run_dir / "metrics.json").read_text())["statuses"]["answered"] == len(every)


def test_rejudge_refuses_a_run_with_a_cut_line_and_changes_nothing(tmp_path):
    archive, run_dir = results_with_a_run(tmp_path)
    cut = cut_last_line(run_dir)
    before = snapshot(tmp_path)
    out = script("rejudge.py", str(run_dir), "--judge-endpoint", "http://127.0.0.1:9/v1", cwd=tmp_path)
    assert_one_line(out, 2, f"responses.jsonl:11 (item {cut}) was cut short by a crash", "acousticbench rerun")
    assert snapshot(tmp_path) == before


def test_compare_runs_names_a_cut_line_instead_of_ignoring_it(tmp_path):
    archive, run_dir = results_with_a_run(tmp_path)
    other = tmp_path / "other"
    shutil.copytree(run_dir, other)
    cut = cut_last_line(other)
    before = snapshot(tmp_path)
    out = script("compare_runs.py", str(run_dir), str(other), cwd=tmp_path)
    assert_one_line(out, 0, f"responses.jsonl:11 (item {cut}) was cut short by a crash", "compared without it")
    assert "Questions in both runs: 10" in out.stdout
    assert snapshot(tmp_path) == before


def test_the_leaderboard_counts_a_promoted_run_once(tmp_path):
    archive, run_dir = results_with_a_run(tmp_path)
    references_of(tmp_path, run_dir)
    out = script("leaderboard.py", "results", "--references", "refs", "--csv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = [line.split(",") for line in out.stdout.splitlines()[1:]]
    assert [(r[1], r[3], r[7], r[8]) for r in rows] == [("Oracle", "rad", "1", "8")]  # one seed, 8 questions: once


def test_the_leaderboard_names_a_damaged_reference(tmp_path):
    archive, run_dir = results_with_a_run(tmp_path)
    summary_without_seed(references_of(tmp_path, run_dir))
    out = script("leaderboard.py", "results", "--references", "refs", cwd=tmp_path)
    assert_one_line(out, 2, "refs/Oracle/rad/summary.json", "runs.0.seed: Field required")


def test_damaged_caches_cost_only_time_and_are_said(tmp_path):
    """The record of verified clips and the judge cache: a damaged one is named on stderr, the run still right."""
    cache = tmp_path / "cache"
    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(cache))
    archive = write_tiny_pack(tmp_path / "archive")
    assert run_cli(*RUN, "--archive", str(archive), cwd=tmp_path, env=env).returncode == 0
    (record,) = (cache / "verified").iterdir()
    record.write_text('["not", "a record"]')
    out = run_cli(*RUN, "--archive", str(archive), "--results-dir", "again", cwd=tmp_path, env=env)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.strip().splitlines() == [f"note: {record}: not a record of verified files; every clip is hashed "
                                               "again (remove the file to silence this)."]
    wav = archive / "rad" / "audio" / "rad_0004_1.wav"
    wav.write_bytes(wav.read_bytes()[:-2] + b"\x01\x02")  # damage after the record was lost is still caught
    out = run_cli(*RUN, "--archive", str(archive), "--results-dir", "third", cwd=tmp_path, env=env)
    assert out.returncode == 2 and "question rad_0004" in out.stderr
