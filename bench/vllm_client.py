"""For bench_vllm.py: real vLLM started with the project's own --local flags, the request phase read from its
/metrics, the harness's own request bodies, and the plain asyncio client that is the limit to compare against."""
from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

SERVE_NAME = "tiny_qwen2_audio_vllm"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, method: str = "GET") -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=30) as response:
        return response.read()


class VllmServer:
    """The Tiny-Qwen2-Audio checkpoint on vLLM from .venv-vllm, as `--local` serves it; dev mode for
    /reset_prefix_cache (a cold cache without a restart)."""

    def __init__(self, prefix_caching: bool, workdir: Path):
        self.prefix_caching, self.log = prefix_caching, workdir / f"vllm-{time.monotonic_ns()}.log"

    def __enter__(self) -> "VllmServer":
        from acousticbench.serve.local import local_command
        from acousticbench.serve.specs import get_spec

        port = _free_port()
        argv, env = local_command(get_spec(SERVE_NAME, Path("archive")), port)
        argv += [] if self.prefix_caching else ["--no-enable-prefix-caching"]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                         env={**os.environ, **env, "VLLM_SERVER_DEV_MODE": "1"})
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                _get(self.url + "/health")
                return self
            except OSError:
                time.sleep(1)
        self.__exit__()
        raise SystemExit(f"vLLM did not start; its log: {self.log}")

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def reset_prefix_cache(self) -> None:
        _get(self.url + "/reset_prefix_cache", method="POST")

    def phase(self, n: int) -> "MetricsPhase":
        return MetricsPhase(self.url, n)


class MetricsPhase:
    """First request to last answer as vLLM counts them (its /metrics every 0.1 s): the same clock for any client."""

    POLL_S = 0.1

    def __init__(self, url: str, n: int):
        self.url, self.n = url, n

    def _counts(self) -> tuple[float, float]:
        text = _get(self.url + "/metrics").decode()
        done = sum(float(v) for v in re.findall(r'^vllm:request_success_total\{[^}]*\} ([\d.e+]+)', text, re.M))
        busy = sum(float(v) for v in re.findall(r'^vllm:num_requests_(?:running|waiting)\{[^}]*\} ([\d.e+]+)', text,
                                                re.M))
        return done, busy

    def __enter__(self) -> "MetricsPhase":
        self.before, _ = self._counts()
        self.first = self.last = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        seen = self.before
        while not self._stop.is_set():
            now = time.monotonic()
            done, busy = self._counts()
            if self.first is None and (busy or done > seen):
                self.first = now
            if done > seen:
                seen, self.last = done, now
            if done - self.before >= self.n:
                return
            time.sleep(self.POLL_S)

    def __exit__(self, *exc) -> None:
        self._thread.join(30)
        self._stop.set()
        self.seconds = max((self.last or 0) - (self.first or 0), 1e-6)


def capture_bodies(repo: Path, archive: Path, task: str, workdir: Path) -> list[bytes]:
    """What the harness sends for `task`, recorded by the test server: the plain client sends exactly these."""
    import json

    from acousticbench.serve.tiny_checkpoint import MODEL_ID
    from servers import openai_server

    with openai_server.serve(model_ids=[MODEL_ID]) as server:
        env = {**os.environ, "ACOUSTICBENCH_TINY_QWEN2_AUDIO_VLLM_ENDPOINT": server.url}
        out = subprocess.run([sys.executable, str(repo / "run.py"), "--model", "Tiny-Qwen2-Audio-vLLM", "--task", task,
                              "--judge", "rules", "--seed", "42", "--archive", str(archive), "--results-dir",
                              str(workdir / "capture")], capture_output=True, text=True, cwd=repo, env=env)
        if out.returncode not in (0, 1):
            raise SystemExit(f"capturing the harness's requests failed:\n{out.stderr[-2000:]}")
        return [json.dumps(r.body).encode() for r in server.received if r.path == "/v1/chat/completions"]


def plain_client(url: str, bodies: list[bytes], in_flight: int) -> int:
    """A few lines of asyncio: `in_flight` workers post the prebuilt bodies; returns the answers that came back."""
    import aiohttp

    async def run() -> int:
        todo, answered = iter(bodies), 0
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                         timeout=aiohttp.ClientTimeout(total=600)) as session:
            async def worker() -> None:
                nonlocal answered
                for body in todo:
                    async with session.post(url + "/v1/chat/completions", data=body,
                                            headers={"Content-Type": "application/json"}) as response:
                        await response.read()
                        answered += response.status == 200

            await asyncio.gather(*(worker() for _ in range(in_flight)))
        return answered

    return asyncio.run(run())
