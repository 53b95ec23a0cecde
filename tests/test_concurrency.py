"""Concurrency over real HTTP: auto finds a server's capacity, a 429 never costs a question its attempts, each endpoint
gets its own limit, a server whose latency climbs is not flooded, and the models of a sweep run at the same time."""
from __future__ import annotations

import json
import re
import resource
import socket
import subprocess
import sys

import pytest

from acousticbench.engine.concurrency import DEFAULT_MAXIMUM
from conftest import write_tiny_pack
from servers import openai_server
from servers.batching import BatchingEngine, Shape
from harness_cli import REPO, harness_env, run_cli, run_dirs
from servers.fixtures import evaluate_model, fast_retries, records  # noqa: F401

VOXTRAL = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"


def concurrency_of(run_dir) -> dict:
    return json.loads((run_dir / "config.json").read_text())["concurrency"]


def test_auto_finds_a_limited_server_and_loses_no_question_to_its_429s(fast_retries, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 472)  # 475 questions, as a task of the open pack
    fast_retries.setenv("ACOUSTICBENCH_MAX_ATTEMPTS", "1")  # a 429 that used up an attempt would lose its question
    with openai_server.serve(capacity=16, delay_s=0.05, retry_after="1") as server:
        fast_retries.setenv(VOXTRAL, server.url)
        result = evaluate_model("Voxtral-Mini-3B", archive, tmp_path / "results")
    got = records(result.run_dir)
    assert [r["status"] for r in got] == ["answered"] * 475
    assert server.state.refused >= 1  # it started above the capacity (at 32) and found it
    assert server.state.served + server.state.refused <= 1.10 * 475  # at most 10% more requests than questions
    assert sum(r["attempts"] for r in got) == server.state.served + server.state.refused
    summary = concurrency_of(result.run_dir)
    assert summary["mode"] == "auto" and summary["endpoints"][0]["overloaded"] == server.state.refused
    assert 8 <= summary["endpoints"][0]["sustained"] <= 17


def test_a_fixed_concurrency_over_the_capacity_still_loses_nothing(fast_retries, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 37)
    fast_retries.setenv("ACOUSTICBENCH_MAX_ATTEMPTS", "1")
    with openai_server.serve(capacity=4, delay_s=0.02, retry_after="0.05") as server:
        fast_retries.setenv(VOXTRAL, server.url)
        result = evaluate_model("Voxtral-Mini-3B", archive, tmp_path / "results", concurrency=32)
    got = records(result.run_dir)
    assert [r["status"] for r in got] == ["answered"] * 40 and server.state.refused >= 1
    assert concurrency_of(result.run_dir)["mode"] == "fixed"


def test_each_endpoint_gets_a_limit_of_its_own(fast_retries, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 117)
    fast_retries.setenv("ACOUSTICBENCH_MAX_ATTEMPTS", "1")
    with openai_server.serve(capacity=3, delay_s=0.05, retry_after="1") as small, \
            openai_server.serve(capacity=12, delay_s=0.05, retry_after="1") as big:
        fast_retries.setenv(VOXTRAL, f"{small.url},{big.url}")
        result = evaluate_model("Voxtral-Mini-3B", archive, tmp_path / "results")
    assert [r["status"] for r in records(result.run_dir)] == ["answered"] * 120
    lanes = {lane["endpoint"]: lane for lane in concurrency_of(result.run_dir)["endpoints"]}
    assert lanes[small.url]["final"] <= 4 < lanes[big.url]["final"]
    assert big.state.served > small.state.served  # the endpoint that takes more gets more


@pytest.mark.slow  # 800 questions one at a time
def test_a_server_whose_latency_climbs_with_load_is_not_flooded(fast_retries, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 797)  # long enough for four windows past its start
    # one at a time, each long beside what the test server's threads spend in parallel: more in flight only waits
    with openai_server.serve(delay_s=0.01, serial=True) as server:
        fast_retries.setenv(VOXTRAL, server.url)
        result = evaluate_model("Voxtral-Mini-3B", archive, tmp_path / "results")
    assert [r["status"] for r in records(result.run_dir)] == ["answered"] * 800
    lane = concurrency_of(result.run_dir)["endpoints"][0]
    assert lane["peak"] > 32  # it did try more than its start
    # more in flight bought no more answers: it came back down, far below the ceiling a batching server may reach
    assert lane["final"] < lane["peak"] <= DEFAULT_MAXIMUM // 2, lane["timeline"]


@pytest.mark.slow  # 1,000 questions through a batching engine
def test_auto_fills_a_batching_server_whose_latency_grows_with_its_batch(fast_retries, tmp_path):
    """vLLM's shape: each step serves the whole batch, and takes longer the bigger the batch (here twice as long at 256
    as at 32) while answering 4x as many per second: auto follows the answers, not the latency."""
    archive = write_tiny_pack(tmp_path / "archive", "rad", 997)
    engine = BatchingEngine(Shape(step_s=0.1, per_seq_s=0.0005, max_batch=256, steps=6))
    with openai_server.serve(lean=True, engine=engine) as server:
        fast_retries.setenv(VOXTRAL, server.url)
        result = evaluate_model("Voxtral-Mini-3B", archive, tmp_path / "results")
    assert [r["status"] for r in records(result.run_dir)] == ["answered"] * 1000
    lane = concurrency_of(result.run_dir)["endpoints"][0]
    assert lane["peak"] >= 256 and engine.most_running > 128, lane["timeline"]  # past the old ceiling of 128
    assert lane["sustained"] > 128, lane["timeline"]  # and it stayed there, past where latency alone would stop


def test_a_sweep_runs_its_models_at_once_and_a_dead_server_stops_only_its_model(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 60)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"  # closed below: nothing answers there
    with openai_server.serve(delay_s=0.05) as first, openai_server.serve(delay_s=0.05) as second:
        env = harness_env(**{VOXTRAL: first.url, "ACOUSTICBENCH_QWEN2_AUDIO_7B_INSTRUCT_ENDPOINT": second.url,
                             "ACOUSTICBENCH_QWEN2_5_OMNI_7B_ENDPOINT": dead})
        out = run_cli("--model", "Voxtral-Mini-3B,Qwen2.5-Omni-7B,Qwen2-Audio-7B-Instruct", "--task", "rad",
                      "--judge", "rules", "--concurrency", "auto", "--archive", str(archive),
                      "--results-dir", str(tmp_path / "results"), cwd=tmp_path, env=env)
    arrivals = [sorted(t for times in s.state.arrivals.values() for t in times) for s in (first, second)]
    assert arrivals[1][0] < arrivals[0][-1] and arrivals[0][0] < arrivals[1][-1]  # both were asked at once
    assert out.returncode == 1, out.stderr
    assert "Sweep: 3 runs, 2 finished, 1 failed" in out.stdout
    assert "Qwen2.5-Omni-7B" in out.stderr and "no server at" in out.stderr
    in_flight = [line for line in out.stdout.splitlines() if "requests in flight" in line]
    assert [line.split(" at ")[0] for line in in_flight] == ["Voxtral-Mini-3B", "Qwen2-Audio-7B-Instruct"]
    assert all("at most (auto limit 32 ->" in line for line in in_flight)


def test_the_closing_line_says_what_was_in_flight_not_the_limit(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 8)  # 11 questions under a limit of 1,000
    with openai_server.serve(delay_s=0.05) as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--concurrency", "1000",
                      "--archive", str(archive), cwd=tmp_path, env=harness_env(**{VOXTRAL: server.url}))
    assert out.returncode == 0, out.stderr
    [line] = [line for line in out.stdout.splitlines() if "requests in flight" in line]
    most = int(re.search(r"(\d+) at most", line).group(1))
    assert server.state.max_inflight <= most <= 11 and "fixed limit 1000 -> 1000" in line


def test_a_low_open_file_limit_is_raised_so_every_connection_fits(tmp_path):
    """A shell's soft limit of open files (often 1,024; 100 here) below what auto or a sweep may hold at once would
    fail requests with EMFILE: the harness raises its own soft limit (up to the hard one) to fit its connections."""
    def low_soft_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (100, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    archive = write_tiny_pack(tmp_path / "archive", "rad", 297)  # 300 questions
    with openai_server.serve(delay_s=0.3) as server:
        out = subprocess.run([sys.executable, str(REPO / "run.py"), "--model", "Voxtral-Mini-3B", "--task", "rad",
                              "--judge", "rules", "--concurrency", "150", "--archive", str(archive),
                              "--results-dir", str(tmp_path / "results")], cwd=tmp_path, capture_output=True,
                             text=True, timeout=120, env=harness_env(**{VOXTRAL: server.url}),
                             preexec_fn=low_soft_limit)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    (run_dir,) = run_dirs(tmp_path / "results")
    assert [r["status"] for r in records(run_dir)] == ["answered"] * 300
    assert server.state.max_inflight > 100  # more connections at once than the limit it was started with
