"""A run as a user stops it: SIGKILL at any moment then --resume, Ctrl-C (SIGINT), and too many errors."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import write_tiny_pack
from harness_cli import REPO, harness_env, marked_processes, run_cli, run_dirs, start_cli
from servers import openai_server
from servers.fixtures import evaluate_model, fast_retries, question_keys, records  # noqa: F401
from servers.local import FaultPlan

VARIABLE = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"


def lines_in(results) -> int:
    dirs = run_dirs(results)
    path = dirs[0] / "responses.jsonl" if dirs else None
    return len(path.read_bytes().splitlines()) if path and path.exists() else 0


def run_until(proc, results, k: int, sig: int, limit_s: float = 60) -> None:
    """Send `sig` once responses.jsonl holds at least k lines (or the run ended by itself)."""
    deadline = time.monotonic() + limit_s
    while lines_in(results) < k and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(sig)


def outcome(run_dir) -> dict[str, tuple]:
    return {r["id"]: (r["chosen"], r["status"], r["response"]) for r in records(run_dir)}


@pytest.mark.slow  # four runs started and killed; the inner loop keeps Ctrl-C and resume
def test_sigkill_at_three_moments_then_resume_matches_an_uninterrupted_run(fast_retries, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 60)
    keys = list(question_keys(archive).values())
    # faults that repeat on every attempt, so the outcome of each question does not depend on how often it is asked
    plan = FaultPlan(by_key={**{k: ["400"] * 9 for k in keys[::9]}, **{k: ["refusal"] * 9 for k in keys[4::11]}})
    with openai_server.serve(plan, delay_s=0.05) as server:
        fast_retries.setenv(VARIABLE, server.url)
        reference = evaluate_model("Voxtral-Mini-3B", archive, tmp_path / "reference", concurrency=2,
                                   max_error_rate=1.0)
        env = harness_env(**{VARIABLE: server.url})
        args = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(archive), "--concurrency", "2",
                "--max-error-rate", "1", "--results-dir", "killed")
        for i, k in enumerate((3, 30, 55)):
            proc = start_cli(*args, *(["--resume"] if i else []), cwd=tmp_path, env=env)
            run_until(proc, tmp_path / "killed", k, signal.SIGKILL)
            assert proc.wait(timeout=30) == -signal.SIGKILL
        done = run_cli(*args, "--resume", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    (run_dir,) = run_dirs(tmp_path / "killed")
    ids = [r["id"] for r in records(run_dir)]
    assert ids == sorted(set(ids)) and len(ids) == 63  # none lost, none twice
    assert outcome(run_dir) == outcome(reference.run_dir)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["scored"] == reference.metrics.scored.model_dump(mode="json")
    assert metrics["statuses"] == reference.metrics.statuses == {"answered": 50, "error": 7, "refused": 6}


def test_ctrl_c_keeps_finished_answers_and_says_how_to_resume(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 30)
    with openai_server.serve(delay_s=0.1) as server:
        env = harness_env(**{VARIABLE: server.url})
        args = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(archive), "--concurrency", "2")
        proc = start_cli(*args, cwd=tmp_path, env=env)
        run_until(proc, tmp_path / "results", 4, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 130, stderr
        assert "interrupted" in stderr and "--resume" in stderr and "Traceback" not in stderr
        (run_dir,) = run_dirs(tmp_path / "results")
        kept = records(run_dir)  # every line is a whole record
        assert 4 <= len(kept) < 33
        done = run_cli(*args, "--resume", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert f"{len(kept)} kept from the earlier run" in done.stdout
    ids = [r["id"] for r in records(run_dir)]
    assert ids == sorted(set(ids)) and len(ids) == 33


def test_too_many_errors_stop_the_run_and_say_why(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 40)
    with openai_server.serve(FaultPlan(always="503")) as server:
        env = harness_env(**{VARIABLE: server.url, "ACOUSTICBENCH_MAX_ATTEMPTS": "2"})
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(archive), "--concurrency", "1",
                      cwd=tmp_path, env=env)
    assert out.returncode == 1
    message = out.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert "stopped: 10 of 10 questions failed, so the error rate is over --max-error-rate 10%" in message
    assert "HTTP 503" in message and "--resume" in message
    assert len(records(run_dirs(tmp_path / "results")[0])) == 10
    # two attempts each, then the run stopped early (43 questions x 2 attempts would be 86 requests); the first dozen
    # 503s, before the harness could tell a failing server from a busy one, were waited out without using up attempts
    assert 20 <= len(server.received) <= 22 + 2 * 12


def _interrupted_build(tmp_path: Path, sig: int, delay_s: float, group: bool) -> subprocess.CompletedProcess:
    """--build-archive interrupted `delay_s` after its staging folder appears (while the pool starts, or working)."""
    mark = uuid.uuid4().hex
    proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), "--build-archive", "--archive", "archive"],
                            cwd=tmp_path, env=harness_env(ACOUSTICBENCH_TEST_MARK=mark, PYTHONFAULTHANDLER="1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(f".archive.building-{proc.pid}-") for p in tmp_path.iterdir()) \
            and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(delay_s)
    os.killpg(proc.pid, sig) if group else proc.send_signal(sig)  # a terminal's Ctrl-C reaches the whole group
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler prints where every thread of the builder is
        pytest.fail(f"the build did not stop on signal {sig}:\n" + proc.communicate(timeout=30)[1][-6000:])
    deadline = time.monotonic() + 10  # a worker of a loaded machine may take a moment to end; one left running stays
    while marked_processes(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marked_processes(mark) == [], "pool workers outlived the build"
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@pytest.mark.parametrize("delay_s", [0.0, 0.2, 1.0])
def test_ctrl_c_while_the_build_pool_starts_is_130_and_leaves_nothing(delay_s, tmp_path):
    out = _interrupted_build(tmp_path, signal.SIGINT, delay_s, group=True)
    assert out.returncode == 130, out.stderr
    assert out.stderr.strip().splitlines() == ["interrupted: nothing half-built is left in place; run the same "
                                               "command again."], out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("delay_s", [0.1, 1.0])
def test_sigterm_during_the_build_is_143_and_leaves_nothing(delay_s, tmp_path):
    out = _interrupted_build(tmp_path, signal.SIGTERM, delay_s, group=False)
    assert out.returncode == 143 and "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "interrupted" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_ctrl_c_that_a_library_swallowed_still_stops_the_build_before_it_is_put_in_place(tmp_path):
    # a Ctrl-C landing while numpy.random is first imported raises in its compiled module, which drops the exception
    # (1 build in 10 ran to the end and exited 0 that way); here the library is one that catches it outright
    code = f"""
import os, signal, sys
from pathlib import Path
sys.path.insert(0, {str(REPO)!r})
from acousticbench.core.errors import end_on_signals, run_command
from acousticbench.packs.staging import staged_folder

def build():
    with staged_folder(Path("archive")) as staging:
        (staging / "half.wav").write_bytes(b"RIFF")
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            pass
        (staging / "MANIFEST.json").write_text("{{}}")
    return 0

end_on_signals()
sys.exit(run_command(build, interrupted="nothing half-built is left in place"))
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 130, out.stderr
    assert out.stderr.strip() == "interrupted: nothing half-built is left in place"
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_build_killed_outright_leaves_a_folder_the_next_build_removes(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid names a process that no longer runs, as a SIGKILLed build's would
    stale = tmp_path / f".archive.building-{dead.pid}-x1y2z3"
    (stale / "rad" / "audio").mkdir(parents=True)
    (stale / "rad" / "audio" / "rad_0001_1.wav").write_bytes(b"RIFF" + b"\0" * 4096)
    mine = tmp_path / f".archive.building-{os.getpid()}-live"  # a build still running (this process): kept
    mine.mkdir()
    _interrupted_build(tmp_path, signal.SIGINT, 0.2, group=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [mine.name]


POOL_CHILD = """
import sys, time
from acousticbench.packs.workers import map_in_processes

def slow(x):
    time.sleep(60)
    return x

if __name__ == "__main__":
    try:
        print("starting", flush=True)
        map_in_processes(slow, [1, 2], 2)
    except KeyboardInterrupt:
        sys.exit(130)
"""


@pytest.mark.parametrize("delay_s", [0.0, 0.01, 0.03])
def test_ctrl_c_to_the_builder_alone_as_its_first_pool_starts_is_never_lost(delay_s, tmp_path):
    """A SIGINT to the builder only (as `kill -INT` or a test sends it) in the first moments of its first pool, when
    Python starts its resource tracker: it stops the build at once rather than being dropped while workers ignore
    SIGINT (it was dropped here, and the build ran to the end, exit 0)."""
    child = tmp_path / "pool_child.py"
    child.write_text(POOL_CHILD)
    proc = subprocess.Popen([sys.executable, str(child)], cwd=REPO, env=harness_env(PYTHONPATH=str(REPO)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "starting\n"
    time.sleep(delay_s)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=20)  # the jobs take 60 s: only an interrupt ends this sooner
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the interrupt was lost: the pool ran on")
    assert proc.returncode == 130 and "Traceback" not in err, err
