"""Open-weight models behind OpenAI-compatible servers (vLLM, our transformers server), one or several endpoints."""
from __future__ import annotations

import asyncio
import os
import time
import urllib.parse
from typing import Any

import openai

from acousticbench.engine import env_number
from acousticbench.errors import UserError
from acousticbench.models.openai_chat import ChatCompletionsBackend, classify, make_client
from acousticbench.models.registry import endpoint_variable
from acousticbench.records import Prompt
from acousticbench.serve.health import health_status


def server_root(url: str) -> str:
    """'http://host:8000/v1/' -> 'http://host:8000': the export line may carry /v1 or not."""
    url = url.strip().rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def public_url(url: str) -> str:
    """The URL without any user:password part, for config.json."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


async def wait_until_up(root: str, wait_s: float) -> None:
    """Poll /health until the server answers (503 means still loading), for at most `wait_s` seconds."""
    deadline = time.monotonic() + wait_s
    while True:
        status = await asyncio.to_thread(health_status, root)
        if status is not None and status != 503:
            return  # 200 is ready; any other answer means a server is there (not every server has /health)
        if time.monotonic() >= deadline:
            state = "still loading (503)" if status == 503 else "nothing answers"
            raise TimeoutError(state)
        await asyncio.sleep(0.25)


class Lanes:
    """SDK clients for one or several endpoints: the least busy endpoint gets the next request, and within an
    endpoint a new client (connection pool) opens for every LANE_SIZE requests in flight. Small pools matter: the
    HTTP pool probes each idle connection on every request, so one pool of 64 cost ~1 ms more CPU per request
    than eight of 8 (bench/bench_engine.py)."""

    LANE_SIZE, MAX_LANES = 8, 8

    def __init__(self, base_urls: list[str], key: str):
        self.base_urls, self.key = base_urls, key
        self.clients: list[list[openai.AsyncOpenAI]] = [[] for _ in base_urls]
        self.busy: list[list[int]] = [[] for _ in base_urls]
        self._next = 0

    def first(self, e: int) -> openai.AsyncOpenAI:
        if not self.clients[e]:
            self.clients[e].append(make_client(self.base_urls[e], self.key))
            self.busy[e].append(0)
        return self.clients[e][0]

    def take(self) -> tuple[openai.AsyncOpenAI, tuple[int, int]]:
        n = len(self.base_urls)
        e = min(range(n), key=lambda k: (sum(self.busy[k]), (k - self._next) % n))  # ties go round-robin
        self._next = (e + 1) % n
        self.first(e)
        busy = self.busy[e]
        lane = next((j for j, b in enumerate(busy) if b < self.LANE_SIZE), None)
        if lane is None and len(busy) < self.MAX_LANES:
            self.clients[e].append(make_client(self.base_urls[e], self.key))
            busy.append(0)
            lane = len(busy) - 1
        if lane is None:
            lane = min(range(len(busy)), key=busy.__getitem__)
        busy[lane] += 1
        return self.clients[e][lane], (e, lane)

    def give_back(self, slot: tuple[int, int]) -> None:
        self.busy[slot[0]][slot[1]] -= 1

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for clients in self.clients for c in clients))


class ServedModel(ChatCompletionsBackend):
    """Chat completions with input_audio against `--endpoint` or ACOUSTICBENCH_<SERVE>_ENDPOINT; greedy by default."""

    backend_name = "served"
    default_concurrency = 32

    def __init__(self, name: str, *, serve_name: str, endpoint: str | None = None, api_model: str | None = None,
                 temperature: float | None = 0.0, max_tokens: int | None = 256, single_audio: bool = False,
                 concurrency: int | None = None, **_ignored: Any):
        self.name, self.serve_name, self.variable = name, serve_name, endpoint_variable(serve_name)
        raw = endpoint or os.environ.get(self.variable, "")
        roots = [server_root(u) for u in raw.split(",") if u.strip()]
        if not roots:
            raise UserError(f"{name} needs a running server: `./scripts/docker_serve.sh {serve_name}` starts one and "
                            f"prints the line `export {self.variable}=...` to paste, or pass --endpoint URL.")
        for root in roots:
            if urllib.parse.urlsplit(root).scheme not in ("http", "https") or not urllib.parse.urlsplit(root).hostname:
                raise UserError(f"{root!r} is not an http(s) URL: set {self.variable} or --endpoint to e.g. http://127.0.0.1:8000.")
        self.roots, self.api_model = roots, api_model or ""
        self.temperature, self.max_tokens, self.single_audio = temperature, max_tokens, single_audio
        self.default_concurrency = concurrency or self.default_concurrency  # a server that batches takes more
        self._key = os.environ.get(f"ACOUSTICBENCH_{serve_name.upper()}_API_KEY") or "EMPTY"  # vLLM's --api-key
        self._lanes: Lanes | None = None
        self.served_ids: list[str] = []

    def _where(self, i: int) -> str:
        return f"{self.name} at {public_url(self.roots[i])}"

    async def _check(self, i: int, client: openai.AsyncOpenAI, wait_s: float) -> str:
        """Wait for one endpoint, then learn the model id it serves."""
        try:
            await wait_until_up(self.roots[i], wait_s)
            served = [m.id for m in (await client.models.list()).data]
        except TimeoutError as err:
            raise UserError(f"no server at {public_url(self.roots[i])} for {self.name} ({err} after {wait_s:g} s): start "
                            f"it with `./scripts/docker_serve.sh {self.serve_name}` or fix {self.variable} / --endpoint.") from None
        except (openai.OpenAIError, ValueError) as err:
            raise UserError(f"{classify(err, self._where(i))} (reading /v1/models); check the server's logs.") from None
        if self.api_model and self.api_model not in served:
            raise UserError(f"{public_url(self.roots[i])} serves {', '.join(served) or 'no model'}, not {self.api_model!r}: "
                            "drop --api-model or start the right model.")
        if not served:
            raise UserError(f"{public_url(self.roots[i])} serves no model (empty /v1/models); check the server's logs.")
        return self.api_model or served[0]

    async def open(self) -> None:
        wait_s = env_number("ACOUSTICBENCH_CONNECT_WAIT", 10.0)
        self._lanes = Lanes([f"{root}/v1" for root in self.roots], self._key)
        self.served_ids = list(await asyncio.gather(
            *(self._check(i, self._lanes.first(i), wait_s) for i in range(len(self.roots)))))
        if len(set(self.served_ids)) > 1:
            raise UserError(f"the endpoints of {self.name} serve different models ({', '.join(self.served_ids)}): "
                            "give endpoints that serve the same model.")
        self.api_model = self.served_ids[0]

    async def close(self) -> None:
        if self._lanes is not None:
            await self._lanes.close()

    def _pick(self) -> tuple[openai.AsyncOpenAI, str, tuple[int, int]]:
        client, slot = self._lanes.take()
        return client, self._where(slot[0]), slot

    def _release(self, slot: tuple[int, int]) -> None:
        self._lanes.give_back(slot)

    def _request(self, prompt: Prompt) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.api_model, "seed": prompt.seed}
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        return request

    def _secrets(self) -> list[str]:
        return [self._key]

    def provenance(self) -> dict:
        return {"backend": self.backend_name, "serve_name": self.serve_name, "endpoint_variable": self.variable,
                "endpoints": [public_url(r) for r in self.roots], "served_model_id": self.api_model,
                "temperature": self.temperature, "max_tokens": self.max_tokens, "seed": "passed per request",
                "single_audio": self.single_audio}
