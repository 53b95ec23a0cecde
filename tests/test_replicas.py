"""Replicas found in a registry folder (--endpoints-from) as they come up and given up when they end, against servers
of ours started and killed mid-run: every question answered exactly once, each replica used."""
from __future__ import annotations

import json
import threading
import time
from collections import Counter

import pytest

from acousticbench.core.errors import UserError
from acousticbench.models import replicas
from conftest import write_tiny_pack
from servers import openai_server
from servers.fixtures import evaluate_model, fast_retries, records  # noqa: F401

MODEL, SERVE = "Voxtral-Mini-3B", "voxtral_mini_3b"


def wait_for(condition, what: str, limit_s: float = 60.0) -> None:
    """Poll until `condition()` holds; the limit is only there so a broken harness fails instead of hanging."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.01)


def answered_once(result, n: int) -> list[dict]:
    got = records(result.run_dir)
    counts = Counter(r["id"] for r in got)
    assert len(counts) == n and set(counts.values()) == {1}, "a question lost or recorded twice"
    assert all(r["status"] == "answered" for r in got)
    return got


@pytest.fixture
def registry(fast_retries, tmp_path):
    fast_retries.setenv("ACOUSTICBENCH_REGISTRY_POLL", "0.02")
    return tmp_path / "registry"


@pytest.mark.parametrize("file_left", [False, True], ids=["scancelled", "killed-without-a-word"])
def test_a_replica_that_joins_takes_work_and_one_that_dies_gives_its_questions_back(registry, tmp_path, file_left):
    """The first replica answers a few, then holds two questions on the wire; a second registers mid-run and is used;
    the first is killed holding its two (its file removed, as scancel does, or left behind, as a SIGKILL does)."""
    archive = write_tiny_pack(tmp_path / "archive", "rad", 30)
    release = threading.Event()
    first = openai_server.serve(delay_s=0.01, hold_after=6, release=release).start()
    second = openai_server.serve(delay_s=0.01).start()
    replicas.write(registry, SERVE, "100_0", first.url, job="100_0")

    def cluster() -> None:
        wait_for(lambda: len(first.received) >= 8, "the first replica holds two questions")
        replicas.write(registry, SERVE, "100_1", second.url, job="100_1")
        wait_for(lambda: len(second.received) >= 3, "the second replica is used")
        if not file_left:
            replicas.remove(registry, SERVE, "100_0")
        first.stop()
        release.set()

    events = threading.Thread(target=cluster, daemon=True)
    events.start()
    try:
        result = evaluate_model(MODEL, archive, tmp_path / "results", concurrency=2, endpoints_from=registry)
    finally:
        release.set()
        events.join(timeout=60)
        second.stop()
    answered_once(result, 33)
    config = json.loads((result.run_dir / "config.json").read_text())
    lanes = config["concurrency"]["endpoints"]
    assert [lane["endpoint"] for lane in lanes] == [first.url, second.url]
    # the first lane also answered the canary's eight probes, asked through the model's queue before the questions
    assert lanes[0]["answered"] == 6 + 8 and lanes[0].get("ended") and lanes[1]["answered"] == 27
    assert [(r["job"], r["ended"]) for r in config["backend"]["replicas"]] == [("100_0", True), ("100_1", False)]
    log = (result.run_dir / "run.log").read_text()
    assert "asked again on another endpoint" in log and "failed after" not in log


def test_replicas_registered_before_the_run_share_the_queue(registry, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 30)
    with openai_server.serve(delay_s=0.02) as one, openai_server.serve(delay_s=0.02) as two:
        replicas.write(registry, SERVE, "7_0", one.url)
        replicas.write(registry, SERVE, "7_1", two.url)
        result = evaluate_model(MODEL, archive, tmp_path / "results", concurrency=4, endpoints_from=registry)
    answered_once(result, 33)
    assert min(len(one.received), len(two.received)) >= 8 and len(one.received) + len(two.received) == 33


def test_no_replica_registered_says_how_to_start_them(registry, tmp_path):
    registry.mkdir()
    archive = write_tiny_pack(tmp_path / "archive", "rad", 2)
    fast_retries_wait = {"ACOUSTICBENCH_REPLICA_WAIT": "0.1"}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in fast_retries_wait.items():
            patch.setenv(name, value)
        with pytest.raises(UserError, match=r"no replica of Voxtral-Mini-3B registered .*docker_serve.sh "
                                            r"voxtral_mini_3b --slurm"):
            evaluate_model(MODEL, archive, tmp_path / "results", endpoints_from=registry)
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


def test_a_registry_file_is_whole_or_absent(tmp_path):
    path = replicas.write(tmp_path, SERVE, "9_0", "http://node1:8123/", job="9_0", node="node1")
    assert [r.describe() for r in replicas.read(tmp_path, SERVE)] == [
        {"replica": "9_0", "url": "http://node1:8123", "job": "9_0", "node": "node1"}]
    assert [p.name for p in path.parent.iterdir()] == ["9_0.json"]  # no partial file left beside it
    replicas.remove(tmp_path, SERVE, "9_0")
    assert replicas.read(tmp_path, SERVE) == []


def test_a_replica_job_registers_once_healthy_and_unregisters_before_it_stops(tmp_path):
    """What each task of `docker_serve.sh NAME --slurm` runs, here outside SLURM with a server of ours: scancel and
    the time limit send SIGTERM, and the replica's file is gone before its server is."""
    import signal
    import subprocess
    import sys

    from acousticbench.models.health import health_status
    from harness_cli import REPO, clean_env

    server = f"{sys.executable} {REPO / 'tests' / 'servers' / 'openai_server.py'} --port {{port}}"
    env = clean_env(SLURM_ARRAY_JOB_ID="5", SLURM_ARRAY_TASK_ID="1", ACOUSTICBENCH_REPLICA_HOST="127.0.0.1")
    job = subprocess.Popen([sys.executable, "-m", "acousticbench.serve.slurm", SERVE, str(tmp_path),
                            "--server-command", server], env=env, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: replicas.read(tmp_path, SERVE) or job.poll() is not None, "the replica registers")
        (replica,) = replicas.read(tmp_path, SERVE)
        assert replica.key == replica.job == "5_1" and health_status(replica.url) == 200
        job.send_signal(signal.SIGTERM)
        assert job.wait(timeout=60) in (0, -signal.SIGTERM, 128 + signal.SIGTERM)
    finally:
        if job.poll() is None:
            job.kill()
    assert replicas.read(tmp_path, SERVE) == [] and health_status(replica.url) is None
    assert "is registered in" in job.stdout.read()
