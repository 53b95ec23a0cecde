"""A results folder another version of the harness wrote (new fields in its records and metrics, a benchmark this
version lacks): every tool names the version that wrote it and says to update, never to delete or rerun good data,
and leaves every file as it was."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs, script
from test_faults import RUN, assert_one_line, snapshot

NEWER = "9.1.0"


def newer_run(tmp_path: Path, *flags: str) -> Path:
    """A finished run as a newer harness writes it: its version, and fields this one does not know."""
    archive = write_tiny_pack(tmp_path / "archive")
    assert run_cli(*RUN, "--archive", str(archive), *flags, cwd=tmp_path, env=harness_env()).returncode == 0
    run_dir = run_dirs(tmp_path / "results")[-1]
    config = json.loads((run_dir / "config.json").read_text())
    config["harness"]["version"] = NEWER
    (run_dir / "config.json").write_text(json.dumps(config))
    metrics = json.loads((run_dir / "metrics.json").read_text())
    (run_dir / "metrics.json").write_text(json.dumps({**metrics, "calibration": {"ece": 0.02}}))
    path = run_dir / "responses.jsonl"
    path.write_text("".join(json.dumps({**json.loads(line), "confidence": 0.9}) + "\n"
                            for line in path.read_text().splitlines()))
    return run_dir


def assert_named_not_condemned(text: str) -> None:
    assert f"written by acousticbench {NEWER}" in text and f"update acousticbench to {NEWER} or later" in text, text
    assert not any(word in text for word in ("delete", "remove", "rerun that run", "not a valid")), text


def test_the_leaderboard_names_the_version_and_still_shows_the_runs_it_can_read(tmp_path):
    run_dir = newer_run(tmp_path)
    assert run_cli(*RUN, "--archive", str(tmp_path / "archive"), "--seed", "43", cwd=tmp_path,
                   env=harness_env()).returncode == 0
    before = snapshot(tmp_path / "results")
    out = script("leaderboard.py", "results", cwd=tmp_path)
    assert out.returncode == 0 and "| Oracle" in out.stdout, out.stderr
    (skipped,) = out.stderr.strip().splitlines()
    assert skipped.startswith(f"skipped: {run_dir.relative_to(tmp_path)} was written by")
    assert_named_not_condemned(skipped)
    assert snapshot(tmp_path / "results") == before


def test_the_report_names_the_version_of_a_run_it_cannot_read(tmp_path):
    newer_run(tmp_path)
    out = run_cli("--report", "results", "--out", "r.html", cwd=tmp_path, env=harness_env())
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert_named_not_condemned(out.stderr.splitlines()[0])


TOOLS = {  # each reads the records of the run: one line naming the version, exit 2, nothing changed
    "compare": lambda run_dir: script("compare_runs.py", str(run_dir), str(run_dir), cwd=run_dir.parent.parent),
    "rejudge": lambda run_dir: script("rejudge.py", str(run_dir), "--judge-endpoint", "http://127.0.0.1:9/v1",
                                      cwd=run_dir.parent.parent),
    "rerun": lambda run_dir: script("rerun_nones.py", "--model", "Oracle", str(run_dir), cwd=run_dir.parent.parent),
    "promote": lambda run_dir: run_cli("--promote-reference", str(run_dir), "--references", "refs",
                                       cwd=run_dir.parent.parent, env=harness_env()),
}


@pytest.mark.parametrize("tool", list(TOOLS))
def test_a_tool_reading_the_records_names_the_version(tool, tmp_path):
    run_dir = newer_run(tmp_path, "--max-samples", "1")  # one record: the last line, never taken for a torn one
    before = snapshot(tmp_path)
    out = TOOLS[tool](run_dir)
    assert_one_line(out, 2, "responses.jsonl:1")
    assert_named_not_condemned(out.stderr)
    assert snapshot(tmp_path) == before


def test_a_run_of_a_benchmark_this_version_lacks_is_named_by_version(tmp_path):
    run_dir = newer_run(tmp_path)
    config = json.loads((run_dir / "config.json").read_text())
    (run_dir / "config.json").write_text(json.dumps({**config, "benchmark": "SpeechQA"}))
    out = script("leaderboard.py", "results", cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert_named_not_condemned(out.stderr.splitlines()[0])
