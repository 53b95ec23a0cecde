"""A run ended as clusters and shells end it: SIGTERM (a batch scheduler's time limit, `timeout`), SIGHUP (a closed
terminal), Ctrl-C once or twice, and a reader that goes away (`| head -1`). Each keeps every record written, marks the
run and the sweep interrupted, says how to resume, exits 128 + the signal within seconds, and --resume finishes the
sweep with every question once."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import write_tiny_pack
from harness_cli import REPO, harness_env, run_dirs
from servers import openai_server

VARIABLE = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"


def sweep_file(results: Path) -> dict:
    (path,) = results.glob("sweep-*.json")
    return json.loads(path.read_text())


def answered_ids(results: Path) -> list[str]:
    (run_dir,) = run_dirs(results)
    return [json.loads(line)["id"] for line in (run_dir / "responses.jsonl").read_text().splitlines()]


def start(archive: Path, results: Path, url: str, *extra: str, cwd: Path, **streams) -> subprocess.Popen:
    argv = [sys.executable, str(REPO / "run.py"), "--model", "Voxtral-Mini-3B", "--task", "rad", "--archive",
            str(archive), "--results-dir", str(results), "--concurrency", "2", "--judge", "rules", *extra]
    env = harness_env(**{VARIABLE: url}, PYTHONFAULTHANDLER="1")  # where a stuck run waits, should one be
    return subprocess.Popen(argv, cwd=cwd, env=env, text=True,
                            **({"stdout": subprocess.PIPE, "stderr": subprocess.PIPE} | streams))


def wait_for_records(results: Path, n: int, proc: subprocess.Popen, limit_s: float = 60) -> None:
    """Until the run has written `n` records; a run that ended first, or is stuck, fails the test with its stderr
    (where it is stuck, from faulthandler), not a bare count."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        dirs = run_dirs(results) if results.is_dir() else []
        if dirs and (dirs[0] / "responses.jsonl").is_file() and len(
                (dirs[0] / "responses.jsonl").read_bytes().splitlines()) >= n:
            return
        time.sleep(0.02)
    if proc.poll() is None:
        proc.send_signal(signal.SIGABRT)  # faulthandler prints where each thread is
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate(timeout=30)
    pytest.fail(f"the run wrote fewer than {n} records in {limit_s} s (exit {proc.returncode}):\n{err[-6000:]}")


def check_interrupted_then_resume(archive: Path, results: Path, url: str, out: str, err: str, code: int,
                                  expected: int, cwd: Path) -> None:
    assert code == expected, err
    assert "Traceback" not in err and "--resume" in err, err
    state = sweep_file(results)
    assert state["state"] == "interrupted" and state["finished_at"], state
    (run_dir,) = run_dirs(results)
    config = json.loads((run_dir / "config.json").read_text())
    assert "interrupted_at" in config and "finished_at" not in config  # nothing looks finished that is not
    kept = answered_ids(results)
    assert kept and len(kept) == len(set(kept))
    done = start(archive, results, url, "--resume", cwd=cwd)
    out, err = done.communicate(timeout=120)
    assert done.returncode == 0, err
    ids = answered_ids(results)
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 11  # the tiny pack's 11 questions, each once
    assert set(kept) <= set(ids)


@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(signal.SIGHUP, marks=pytest.mark.slow)])  # one path: SIGTERM in the inner loop
def test_sigterm_and_sighup_keep_the_records_and_mark_the_run_interrupted(sig, tmp_path):
    archive, results = write_tiny_pack(tmp_path / "archive"), tmp_path / "results"
    with openai_server.serve(delay_s=0.4) as server:
        proc = start(archive, results, server.url, cwd=tmp_path)
        wait_for_records(results, 2, proc)
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        assert time.monotonic() - sent < 5  # a scheduler sends SIGKILL soon after
        check_interrupted_then_resume(archive, results, server.url, out, err, proc.returncode, 128 + sig, tmp_path)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_again_while_the_first_unwinds_still_marks_the_run_interrupted(sig, tmp_path):
    """`timeout` signals the command and then its process group, so a run gets SIGTERM twice; a scheduler may repeat
    it, a person press Ctrl-C twice: the second must not cut short what the first set going (a config.json.tmp left,
    or config.json never marked interrupted, in 2 of 30 runs sent two SIGTERMs 0-30 ms apart, and 2 of 40 sent two
    Ctrl-Cs 0-60 ms apart)."""
    archive, results = write_tiny_pack(tmp_path / "archive"), tmp_path / "results"
    with openai_server.serve(delay_s=0.4) as server:
        proc = start(archive, results, server.url, cwd=tmp_path)
        wait_for_records(results, 2, proc)
        deadline = time.monotonic() + 5
        while proc.poll() is None and time.monotonic() < deadline:  # again and again until it has exited
            proc.send_signal(sig)
            time.sleep(0.0002)
        out, err = proc.communicate(timeout=30)
        (run_dir,) = run_dirs(results)
        assert not list(run_dir.glob("*.tmp")), sorted(run_dir.iterdir())
        check_interrupted_then_resume(archive, results, server.url, out, err, proc.returncode, 128 + sig, tmp_path)


def test_timeout_sends_term_mid_run_and_resume_finishes_the_sweep(tmp_path):
    """`timeout -s TERM` ends the run mid-way. Its limit is its own SIGALRM: sent once three answers are written, it
    acts as the time running out there, however long a loaded machine took to start the run (a fixed 10 s limit
    landed before the run folder existed in 2 of 5 loaded runs)."""
    archive, results = write_tiny_pack(tmp_path / "archive"), tmp_path / "results"
    release = threading.Event()  # 3 answers, then the server holds the 4th until the run has been stopped
    with openai_server.serve(delay_s=0.05, hold_after=3, release=release) as server:
        argv = ["timeout", "-s", "TERM", "600", sys.executable, str(REPO / "run.py"), "--model", "Voxtral-Mini-3B",
                "--task", "rad", "--archive", str(archive), "--results-dir", str(results), "--concurrency", "1",
                "--judge", "rules"]
        proc = subprocess.Popen(argv, cwd=tmp_path, env=harness_env(**{VARIABLE: server.url}), text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for_records(results, 3, proc)
        proc.send_signal(signal.SIGALRM)
        out, err = proc.communicate(timeout=60)
        release.set()
        check_interrupted_then_resume(archive, results, server.url, out, err, proc.returncode, 124,
                                      tmp_path)  # timeout's own code when it had to stop the command


def test_sigterm_as_the_run_folder_opens_marks_it_interrupted(tmp_path):
    """A scheduler's signal can land the moment a run's folder appears, before its first answer: the folder still says
    it was interrupted, never a config that looks neither finished nor interrupted."""
    archive, results = write_tiny_pack(tmp_path / "archive"), tmp_path / "results"
    with openai_server.serve(delay_s=0.4) as server:
        proc = start(archive, results, server.url, cwd=tmp_path)
        deadline = time.monotonic() + 60
        while not (results.is_dir() and run_dirs(results)) and time.monotonic() < deadline:
            time.sleep(0.001)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 128 + signal.SIGTERM and "Traceback" not in err, err
        (run_dir,) = run_dirs(results)
        config = json.loads((run_dir / "config.json").read_text())
        assert "interrupted_at" in config and "finished_at" not in config
        done = start(archive, results, server.url, "--resume", cwd=tmp_path)
        out, err = done.communicate(timeout=120)
    assert done.returncode == 0, err
    assert sorted(answered_ids(results)) == sorted(set(answered_ids(results))) and len(answered_ids(results)) == 11


def test_ctrl_c_twice_still_marks_the_sweep_interrupted(tmp_path):
    archive, results = write_tiny_pack(tmp_path / "archive"), tmp_path / "results"
    with openai_server.serve(delay_s=0.4) as server:
        proc = start(archive, results, server.url, cwd=tmp_path)
        wait_for_records(results, 2, proc)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        check_interrupted_then_resume(archive, results, server.url, out, err, proc.returncode, 130, tmp_path)


def test_a_pipe_into_head_ends_the_run_with_a_word_of_resume(tmp_path):
    archive, results = write_tiny_pack(tmp_path / "archive"), tmp_path / "results"
    with openai_server.serve(delay_s=0.2) as server:
        command = (f"{sys.executable} {REPO / 'run.py'} --model Voxtral-Mini-3B,Oracle --task rad --archive {archive} "
                   f"--results-dir {results} --judge rules --seeds 1,2,3 | head -1")
        out = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=tmp_path, capture_output=True, text=True,
                             env=harness_env(**{VARIABLE: server.url}), timeout=120)
    assert len(out.stdout.splitlines()) == 1
    assert out.returncode == 141 and "Traceback" not in out.stderr and "--resume" in out.stderr, out.stderr
    assert sweep_file(results)["state"] == "interrupted"


def test_answers_waiting_for_the_judge_are_kept_labelled_by_the_rules(tiny_pack, tmp_path):
    """SIGTERM while the LLM judge reads: no answer is lost; each is labelled by the rules, or left for rejudge."""
    from servers.judge_server import JudgeServer, verdict

    def slow(request):
        time.sleep(3)
        return verdict("A")

    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"))
    with JudgeServer(default=slow) as judge:
        proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), "--model", "Always-A", "--task", "rad",
                                 "--archive", str(tiny_pack), "--judge", "llm", "--judge-endpoint", judge.url],
                                cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (len(judge.requests) >= 2 and
                                                   list((tmp_path / "results").glob("*/config.json"))):
            time.sleep(0.02)  # past the judge's probe: the answers are with the judge, which takes 3 s over each
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and "--resume" in err, err
    (run_dir,) = run_dirs(tmp_path / "results")
    lines = [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert lines and {(r["chosen"], r["status"], r["judge"]["method"]) for r in lines} == {("A", "answered", "rules")}
