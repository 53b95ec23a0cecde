"""The tools that only read runs: piped into a reader that has already gone (`| head -1` after its line, `| true`),
one line saying nothing was changed and the shell's 141, never a Broken pipe traceback; given a folder that is not
there, one line, never a result without it."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import write_tiny_pack
from harness_cli import REPO, harness_env, run_cli, run_dirs


def closed_pipe_run(*args: str, cwd) -> subprocess.CompletedProcess:
    """A script whose stdout is a pipe nobody reads any more: its first write fails, whatever the load."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, *args], cwd=cwd, stdout=write_end, stderr=subprocess.PIPE, text=True,
                              env=harness_env(), timeout=120)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("tool", ["leaderboard.py", "compare_runs.py"])
def test_a_reading_tool_whose_reader_went_away_says_so_in_one_line(tool, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    done = run_cli("--model", "Oracle", "--task", "rad", "--judge", "rules", "--seeds", "42,43", "--archive",
                   str(archive), cwd=tmp_path, env=harness_env())
    assert done.returncode == 0, done.stderr
    folders = [str(p) for p in run_dirs(tmp_path / "results")]
    out = closed_pipe_run(str(REPO / "scripts" / tool), *(["results"] if tool == "leaderboard.py" else folders),
                          cwd=tmp_path)
    assert out.returncode == 141 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.strip() == "interrupted: the output's reader went away; it only reads the runs: nothing was changed."


def test_a_report_asked_to_compare_with_references_that_are_not_there_is_refused(tmp_path):
    from harness_cli import assert_one_line

    archive = write_tiny_pack(tmp_path / "archive")
    assert run_cli("--model", "Oracle", "--task", "rad", "--judge", "rules", "--max-samples", "2", "--archive",
                   str(archive), cwd=tmp_path, env=harness_env()).returncode == 0
    out = run_cli("--report", "results", "--references", "no-such-folder", cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, "--references no-such-folder is not a folder")
    assert not (tmp_path / "report.html").exists()
