"""A model of our transformers server, started on 127.0.0.1 for the length of a run and asked like any served one."""
from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from acousticbench.errors import UserError
from acousticbench.models.openai_compat import ServedModel
from acousticbench.models.health import health_status
from acousticbench.settings import endpoint_variable, env_number


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
    ACOUSTICBENCH_<SERVE>_ENDPOINT set, uses that server instead and starts nothing."""

    backend_name = "local-server"
    default_concurrency = 4  # the server answers one request at a time; a few queued keep it busy

    def __init__(self, name: str, *, serve_name: str, endpoint: str | None = None, **settings: Any):
        self.owns_server = not (endpoint or os.environ.get(endpoint_variable(serve_name)))
        if self.owns_server:
            needed = ("torch", "transformers", "fastapi", "uvicorn")
            missing = [m for m in needed if importlib.util.find_spec(m) is None]
            if missing:
                raise UserError(f"{name} needs torch and the [hf-server] extra ({', '.join(missing)} missing): "
                                f"{INSTALL}")
            endpoint = "http://127.0.0.1:1"  # a placeholder until open() knows the port
        super().__init__(name, serve_name=serve_name, endpoint=endpoint, **settings)
        self.process: subprocess.Popen | None = None
        self.log_path: Path | None = None

    def _command(self, port: int) -> list[str]:
        return [sys.executable, "-m", "acousticbench.serve.hf_server", "--model", self.serve_name,
                "--host", "127.0.0.1", "--port", str(port), "--exit-with-parent"]

    async def _start(self) -> str:
        """Start the server and wait for /health (bounded); a server that dies says why, from its own log."""
        port = free_port()
        fd, name = tempfile.mkstemp(prefix=f"acousticbench-{self.serve_name}-", suffix=".log")
        self.log_path = Path(name)
        with os.fdopen(fd, "wb") as log:
            self.process = subprocess.Popen(self._command(port), stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT)
        atexit.register(self._stop_process)  # also when the run ends without close() (a crash in the harness)
        root = f"http://127.0.0.1:{port}"
        wait_s = env_number("ACOUSTICBENCH_SERVER_START_WAIT", 120.0)
        deadline = time.monotonic() + wait_s
        while True:
            code = self.process.poll()
            if code is not None:
                raise UserError(f"the {self.name} server exited while starting (exit code {code}): "
                                f"{log_tail(self.log_path) or 'no output'}")
            if await asyncio.to_thread(health_status, root) == 200:
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

    def _stop_process(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            await asyncio.to_thread(self._stop_process)

    def provenance(self) -> dict:
        started = {"server": "started by the harness: python -m acousticbench.serve.hf_server --model "
                             f"{self.serve_name}", "server_pid": self.process.pid if self.process else None,
                   "server_packages": _versions("torch", "transformers")} if self.owns_server else {}
        return {**super().provenance(), **started}
