"""A results folder over the user's disk quota or file size limit (ulimit -f) mid-run, as a shared cluster's home
folder is: one line naming the file and --resume, exit 2; --resume then finishes the run with every question once."""
from __future__ import annotations

import json

from conftest import write_tiny_pack
from harness_cli import REPO, assert_one_line, harness_env, python, run_cli

RUN = ("--model", "Oracle", "--task", "rad", "--judge", "rules", "--max-samples", "10")
LIMITED = ("import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)); "
           "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")  # 10 records pass 4 KiB


def test_a_file_size_limit_reached_mid_run_is_one_line_and_resume_finishes(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    out = python("-c", LIMITED, str(REPO / "run.py"), *RUN, "--archive", str(archive), cwd=tmp_path)
    assert_one_line(out, 2, "file size limit while writing", "responses.jsonl", "--resume")
    (run_dir,) = [p for p in (tmp_path / "results").iterdir() if p.is_dir()]
    out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path, env=harness_env())
    assert out.returncode == 0, out.stderr
    ids = [json.loads(line)["id"] for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert ids == sorted(set(ids)) and len(ids) == 10  # every question once


