"""Two commands on one run folder: every writer (a run, --resume, rerun, rejudge) takes the run's lock, every reader
that copies or advises (promote, the leaderboard, the report) respects it, and what they print fits a run being
written: never "--resume" for a run another command is still writing."""
from __future__ import annotations

import fcntl
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import write_tiny_pack
from harness_cli import assert_one_line, harness_env, python, run_cli, run_dirs
from test_faults import RUN


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@contextmanager
def written_by_another_command(run_dir: Path):
    """The lock a run, rerun or rejudge holds while it writes the folder, held here as another process would."""
    with (run_dir / ".lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def a_run(tmp_path: Path, finished: bool = True) -> Path:
    archive = write_tiny_pack(tmp_path / "archive")
    out = run_cli(*RUN, "--archive", str(archive), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    if not finished:
        (run_dir / "metrics.json").unlink()
    return run_dir


def acousticbench(tmp_path: Path, *args: str):
    return python("-m", "acousticbench", *args, cwd=tmp_path, env=harness_env())


@pytest.mark.parametrize("command", [["rerun", "--model", "Oracle"],
                                     ["rejudge", "--judge-endpoint", "http://127.0.0.1:9/v1"]], ids=lambda c: c[0])
def test_rerun_and_rejudge_refuse_a_run_another_command_is_writing_and_change_nothing(command, tmp_path):
    run_dir = a_run(tmp_path)
    before = files(tmp_path / "results")
    with written_by_another_command(run_dir):
        out = acousticbench(tmp_path, command[0], str(run_dir), *command[1:])
    assert_one_line(out, 2, f"{run_dir} is being written by another process", "nothing was changed")
    assert files(tmp_path / "results") == before


def test_promote_refuses_a_run_another_command_is_writing(tmp_path):
    run_dir = a_run(tmp_path)
    with written_by_another_command(run_dir):
        out = run_cli("--promote-reference", str(run_dir), "--references", str(tmp_path / "refs"), cwd=tmp_path)
    assert_one_line(out, 2, "is being written by another process", "promote it once that has finished")
    assert not (tmp_path / "refs").exists() or not any((tmp_path / "refs").rglob("*.jsonl"))


def test_the_leaderboard_says_a_locked_unfinished_run_is_being_written_not_to_resume_it(tmp_path):
    run_dir = a_run(tmp_path, finished=False)
    with written_by_another_command(run_dir):
        out = acousticbench(tmp_path, "leaderboard", "results")
    assert f"{run_dir.name}: no metrics.json yet (it is being written by a running command" in out.stderr, out.stderr
    assert "--resume" not in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_the_report_says_a_locked_unfinished_run_is_being_written_not_to_resume_it(tmp_path):
    run_dir = a_run(tmp_path, finished=False)
    with written_by_another_command(run_dir):
        out = acousticbench(tmp_path, "report", "results", "--out", str(tmp_path / "report.html"))
    assert "being written by a running command" in out.stderr and "--resume" not in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_an_unfinished_run_no_command_is_writing_is_still_advised_to_resume(tmp_path):
    run_dir = a_run(tmp_path, finished=False)
    (run_dir / ".lock").touch()
    out = acousticbench(tmp_path, "leaderboard", "results")
    assert "the run did not finish; continue it with --resume" in out.stderr, out.stderr


def test_a_resume_refuses_a_run_another_command_is_writing_and_continues_it_once_that_ended(tmp_path):
    run_dir = a_run(tmp_path, finished=False)
    archive = tmp_path / "archive"
    with written_by_another_command(run_dir):
        out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path)
    assert_one_line(out, 2, "is being written by another process")
    out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path)
    assert out.returncode == 0 and "11 kept from the earlier run" in out.stdout, out.stdout + out.stderr


def test_rerun_beside_a_resume_still_asking_refuses_and_no_record_or_history_entry_is_lost(tmp_path):
    import threading
    import time

    from servers import openai_server
    from servers.fixtures import question_keys, records
    from servers.local import FaultPlan
    from test_faults import VARIABLE

    archive = write_tiny_pack(tmp_path / "archive")
    keys = question_keys(archive)
    voxtral = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--concurrency", "1",
               "--archive", str(archive))
    failing = FaultPlan(by_key={keys[qid]: ["400"] for qid in ("rad_0002", "rad_0005", "rad_0008")})
    with openai_server.serve(failing) as server:
        env = harness_env(**{VARIABLE: server.url})
        assert run_cli(*voxtral, cwd=tmp_path, env=env).returncode == 1  # finished, three errors over the budget
    (run_dir,) = run_dirs(tmp_path / "results")
    done: dict = {}
    with openai_server.serve(delay_s=2.0) as server:  # the resume asks its three for about 6 s
        env = harness_env(**{VARIABLE: server.url})
        resuming = threading.Thread(target=lambda: done.update(out=run_cli(*voxtral, "--resume", cwd=tmp_path,
                                                                           env=env)))
        resuming.start()
        while not any(r.path.endswith("completions") for r in server.received) and resuming.is_alive():
            time.sleep(0.02)
        rerun = python("-m", "acousticbench", "rerun", str(run_dir), "--model", "Voxtral-Mini-3B", cwd=tmp_path, env=env)
        resuming.join()
    assert_one_line(rerun, 2, "is being written by another process")
    assert done["out"].returncode == 0, done["out"].stderr
    ids = [r["id"] for r in records(run_dir)]
    assert ids == sorted(set(ids)) and len(ids) == 11 and {r["status"] for r in records(run_dir)} == {"answered"}
    import json

    assert json.loads((run_dir / "config.json").read_text()).get("history", []) == []  # nothing claims a rerun


def test_promote_refuses_a_reference_folder_another_promote_is_writing(tmp_path):
    import os

    run_dir = a_run(tmp_path)
    assert run_cli("--promote-reference", str(run_dir), "--references", "refs", cwd=tmp_path).returncode == 0
    (folder,) = {p.parent for p in (tmp_path / "refs").rglob("summary.json")}
    before = files(tmp_path / "refs")
    fd = os.open(folder, os.O_RDONLY)  # what a promote holds while it reads, changes and writes summary.json
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        out = run_cli("--promote-reference", str(run_dir), "--references", "refs", cwd=tmp_path)
    finally:
        os.close(fd)
    assert_one_line(out, 2, "is being written by another promote", "nothing was written there")
    assert files(tmp_path / "refs") == before
