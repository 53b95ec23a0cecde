"""Open-weight models behind OpenAI-compatible servers (vLLM, our transformers server), one or several endpoints."""
from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.parse
from typing import Any

import aiohttp
import yarl

from acousticbench.core.errors import BackendError, UserError
from acousticbench.models.base import BackendBase
from acousticbench.models import replicas
from acousticbench.models.following import Following, FollowsRegistry
from acousticbench.models.completion import GarbledBody, server_json
from acousticbench.models.chat_wire import (OVERLOAD_STATUS, audio_request_json, public_url, redact, reply_from,
                                           retry_after_s, retryable_status)
from acousticbench.core.environment import endpoint_variable, env_number
from acousticbench.core.records import Prompt, Reply
from acousticbench.models.health import health_status
from acousticbench.models.limits import Limits, check_prompts
from acousticbench.models.redirects import Origins, moved_elsewhere, moved_root
from acousticbench.models.server_facts import listed_facts, served_models, template_facts

# Every sampling parameter vLLM would otherwise take from a checkpoint's generation_config.json, at its greedy value:
# vLLM fills what a request leaves unset from the server's defaults (ChatCompletionRequest.to_sampling_params in
# vllm/entrypoints/openai/chat_completion/protocol.py, v0.32.0), so temperature 0 alone is not greedy there
TOP_LOGPROBS = 20  # OpenAI's maximum and vLLM's default --max-logprobs: the widest look at the first token
VLLM_GREEDY = {"top_p": 1.0, "top_k": 0, "min_p": 0.0, "repetition_penalty": 1.0, "presence_penalty": 0.0,
               "frequency_penalty": 0.0}


def stall_s() -> float:
    """Seconds an answer's body may take after its headers (a server that computes first and then sends, as vLLM
    does, sends the body at once; the request timeout still caps the wait for the headers)."""
    return env_number("ACOUSTICBENCH_STALL_TIMEOUT", 30.0)


def server_root(url: str) -> str:
    """'http://host:8000/v1/' -> 'http://host:8000': the export line may carry /v1 or not."""
    url = url.strip().rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


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


class Endpoints:
    """One aiohttp session per endpoint; the least busy endpoint gets the next request (ties go round-robin)."""

    def __init__(self, roots: list[str]):
        # the engine owns timeouts and retries; no limit on connections: the engine bounds what is in flight
        self.sessions = [aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                               timeout=aiohttp.ClientTimeout(total=None)) for _ in roots]
        self.busy = [0] * len(roots)
        self._next = 0

    def take(self) -> int:
        n = len(self.busy)
        i = min(range(n), key=lambda k: (self.busy[k], (k - self._next) % n))
        self._next = (i + 1) % n
        self.busy[i] += 1
        return i

    def give_back(self, i: int) -> None:
        self.busy[i] -= 1

    def add(self) -> None:
        self.sessions.append(aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                                   timeout=aiohttp.ClientTimeout(total=None)))
        self.busy.append(0)

    async def close(self) -> None:
        await asyncio.gather(*(session.close() for session in self.sessions))


def _error_detail(raw: bytes) -> str:
    """The message of an OpenAI-style error body, else the body's start."""
    try:
        body = server_json(raw)
        body = body.get("error", body) if isinstance(body, dict) else body
        if isinstance(body, dict) and body.get("message"):
            return str(body["message"])[:300]
    except ValueError:
        pass
    return raw[:300].decode("utf-8", "replace")


VLLM_START = 256  # auto's start at a server that said it is vLLM: its default max_num_seqs on most GPUs (128 on a CPU)


class ServedModel(FollowsRegistry, BackendBase):
    """Chat completions with input_audio against `--endpoint` or ACOUSTICBENCH_<SERVE>_ENDPOINT, or the replicas of a
    registry folder (--endpoints-from, ACOUSTICBENCH_ENDPOINTS_FROM) as they come and go; greedy by default.

    Plain HTTP (aiohttp), not the openai SDK: the SDK's request and response layers cost as much CPU per question
    as the rest of the harness; the wire format is the same."""

    backend_name = "served"
    default_concurrency = 32
    adaptive_concurrency = True  # --concurrency auto by default: each endpoint's capacity is found as the run goes

    def __init__(self, name: str, *, serve_name: str, endpoint: str | None = None, api_model: str | None = None,
                 temperature: float | None = 0.0, max_tokens: int | None = 256, limits: Limits | None = None,
                 concurrency: int | None = None, server: str = "vllm", system: str | None = None,
                 text_first: bool = False, logprobs: bool = False, endpoints_from: str | None = None, **_ignored: Any):
        self.name, self.serve_name, self.variable = name, serve_name, endpoint_variable(serve_name)
        # --endpoint, then --endpoints-from, then the model's own variable, then the registry's
        registry = None if endpoint else endpoints_from or (
            None if os.environ.get(self.variable) else os.environ.get(replicas.VARIABLE) or None)
        self.following = Following(registry, serve_name, name) if registry else None
        raw = endpoint or ("" if self.following else os.environ.get(self.variable, ""))
        roots = [server_root(u) for u in raw.split(",") if u.strip()]
        if not roots and self.following is None:
            raise UserError(f"{name} needs a running server: `./scripts/docker_serve.sh {serve_name}` starts one and "
                            f"prints the line `export {self.variable}=...` to paste, or pass --endpoint URL.")
        for root in roots:
            if urllib.parse.urlsplit(root).scheme not in ("http", "https") or not urllib.parse.urlsplit(root).hostname:
                raise UserError(f"{root!r} is not an http(s) URL: set {self.variable} or --endpoint to e.g. http://127.0.0.1:8000.")
        self.roots, self.api_model = roots, api_model or ""
        self.temperature, self.max_tokens, self.limits = temperature, max_tokens, limits or Limits()
        self.merge_over = self.limits.merge_over  # Backend.merge_over: its records fingerprint the merged clip
        self.default_concurrency = concurrency or self.default_concurrency  # a server that batches takes more
        self.max_concurrency = concurrency  # the table's number for a server that takes a few at once: auto's ceiling
        self._key = os.environ.get(f"ACOUSTICBENCH_{serve_name.upper()}_API_KEY") or "EMPTY"  # vLLM's --api-key
        self._headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self._key}"}
        self._urls: dict[tuple[int, str], yarl.URL] = {}  # aiohttp's own URL type
        self._endpoints: Endpoints | None = None
        self._slots = None  # the engine's, once the run follows a registry (watch_endpoints)
        self.server, self.system, self.text_first, self.logprobs = server, system, text_first, logprobs
        self.sampling = VLLM_GREEDY if server == "vllm" and temperature == 0.0 else {}
        self.served_ids: list[str] = []
        self.server_decoding: dict | None = None  # what our server says it applies; vLLM reports none over HTTP
        self.server_version: str | None = None  # vLLM's GET /version
        self.origins = [Origins(name, root) for root in roots]  # where each endpoint's answers really came from
        self._listing: Any = None  # /v1/models as the server gave it
        self.serving: dict[str, Any] = {}  # how the server says the model is served (config.json's manifest)

    def _where(self, i: int) -> str:
        return f"{self.name} at {public_url(self.roots[i])}"  # made only on a failure, never per request

    async def _call(self, i: int, method: str, path: str, body: bytes | None = None) -> Any:
        """One HTTP exchange with endpoint i: its JSON, or a BackendError that says whether asking again can help."""
        return (await self._exchange(i, method, path, body))[0]

    async def _exchange(self, i: int, method: str, path: str, body: bytes | None = None) -> tuple[Any, str | None]:
        """_call's JSON, and the root that answered where a redirect took the request to another origin (else None).
        A body that is not UTF-8 is read with its bytes kept (as lone surrogates), never refused."""
        url = self._url(i, path)
        if self.following is not None and i in self.following.ended:  # its session is closed
            raise BackendError(f"{self._where(i)} ended", retryable=True, gone=True)
        try:
            async with self._endpoints.sessions[i].request(method, url, data=body, headers=self._headers) as response:
                status, response_headers, final = response.status, response.headers, response.url
                raw = await self._body(i, response)
        except aiohttp.ClientError as err:
            if self.following is not None and await self._lost(i):
                raise BackendError(f"{self._where(i)} ended ({type(err).__name__})", retryable=True,
                                   gone=True) from None
            message = redact(f"lost the connection to {self._where(i)} ({type(err).__name__}: {err})", [self._key])
            raise BackendError(message, retryable=True) from None
        if status != 200:
            retryable = retryable_status(status)
            said = redact(f"{self._where(i)} answered HTTP {status}: {_error_detail(raw)}", [self._key])
            # a replica shutting down (scancel signals the server too) answers 500s before its file is gone
            if self.following is not None and status >= 500 and status not in OVERLOAD_STATUS and await self._lost(i):
                raise BackendError(f"{said} (the replica ended)", retryable=True, gone=True)
            raise BackendError(said,
                               retryable=retryable, retry_after=retry_after_s(response_headers) if retryable else None,
                               overloaded=status in OVERLOAD_STATUS)
        moved = None if final.origin() == url.origin() else moved_root(str(url), str(final), path)
        try:
            try:
                return server_json(raw), moved
            except UnicodeDecodeError:  # a string in it is not UTF-8: kept byte for byte, never an answer
                data = server_json(raw.decode("utf-8", "surrogateescape"))
                return (GarbledBody(data) if isinstance(data, dict) else data), moved
        except ValueError as err:
            why = f"{err}: {raw[:24]!r}..." if "nested" in str(err) else f"not JSON: {raw[:80]!r}"
            raise BackendError(f"{self._where(i)} sent a malformed response ({why})", retryable=True) from None

    async def _body(self, i: int, response: aiohttp.ClientResponse) -> bytes:
        """The answer's body; headers and then nothing: a stalled body ends here, not after the whole request
        timeout. A body that came whole with its headers (the usual answer) cannot stall, so it needs no timer."""
        if response.content.is_eof():
            return await response.read()
        try:
            async with asyncio.timeout(stall_s()):
                return await response.read()
        except TimeoutError:
            raise BackendError(f"{self._where(i)} sent headers and then not the whole answer within {stall_s():g} s "
                               "(ACOUSTICBENCH_STALL_TIMEOUT)", retryable=True) from None

    def _url(self, i: int, path: str) -> yarl.URL:
        """The endpoint's URL for `path`, parsed once (aiohttp parsed the string again for every request)."""
        key = (i, path)
        if key not in self._urls:
            self._urls[key] = yarl.URL(self.roots[i] + path)
        return self._urls[key]

    async def _check(self, i: int, wait_s: float) -> str:
        """Wait for one endpoint, then learn the model id it serves (and vLLM's version, for config.json). Health,
        models and version are asked at once: a connection and a request's round trip, not five round trips, which a
        server far away makes the user wait for. Answers that came before the server said it is up count for
        nothing: then they are asked again."""
        try:
            health, listing, version = await asyncio.gather(
                asyncio.to_thread(health_status, self.roots[i]), self._exchange(i, "GET", "/v1/models"), self._version(i),
                return_exceptions=True)
            if isinstance(health, BaseException) or health is None or health == 503:
                await wait_until_up(self.roots[i], wait_s)
                listing = version = None
            if listing is None or isinstance(listing, BaseException):  # asked again once up (or raced its start)
                listing, version = await self._exchange(i, "GET", "/v1/models"), await self._version(i)
            self.server_version = version
            if self.following is not None:
                self.following.versions[i] = version
            listing, moved = listing
            if moved and self.origins[i].follow(moved):  # every request goes where the server sends them
                self.roots[i] = moved
                self._urls = {key: url for key, url in self._urls.items() if key[0] != i}
            decoding = served_models(listing, public_url(self.roots[i]))
            self._listing = listing
            served = list(decoding)
        except TimeoutError as err:
            raise UserError(f"no server at {public_url(self.roots[i])} for {self.name} ({err} after {wait_s:g} s): start "
                            f"it with `./scripts/docker_serve.sh {self.serve_name}` or fix {self.variable} / --endpoint.") from None
        except BackendError as err:
            raise UserError(f"{err} (reading /v1/models); check the server's logs.") from None
        if self.api_model and self.api_model not in served:
            raise UserError(f"{public_url(self.roots[i])} serves {', '.join(served) or 'no model'}, not {self.api_model!r}: "
                            "drop --api-model or start the right model.")
        if not served:
            raise UserError(f"{public_url(self.roots[i])} serves no model (empty /v1/models); check the server's logs.")
        self.server_decoding = decoding.get(self.api_model or served[0])
        return self.api_model or served[0]

    async def _version(self, i: int) -> str | None:
        """vLLM's GET /version; None from a server that is not vLLM or has no such route."""
        if self.server != "vllm":
            return None
        try:
            return (await self._call(i, "GET", "/version")).get("version")
        except (BackendError, AttributeError):
            return None  # not every vLLM-compatible server has it

    async def open(self) -> None:
        wait_s = env_number("ACOUSTICBENCH_CONNECT_WAIT", 10.0)
        if self.following is not None:
            found = await self.following.first()
            self.roots = [server_root(r.url) for r in found]
            self._endpoints = Endpoints(self.roots)
            return await self._check_registered(found, wait_s)
        self._endpoints = Endpoints(self.roots)
        self.served_ids = list(await asyncio.gather(*(self._check(i, wait_s) for i in range(len(self.roots)))))
        if len(set(self.served_ids)) > 1:
            raise UserError(f"the endpoints of {self.name} serve different models ({', '.join(self.served_ids)}): "
                            "give endpoints that serve the same model.")
        self.api_model = self.served_ids[0]
        template = (await template_facts(lambda body: self._call(0, "POST", "/tokenize", body), self.api_model)
                    if self.server == "vllm" else {})
        self.serving = {**listed_facts(self._listing, self.api_model), **template}
        if self.server_version and not self.max_concurrency:  # vLLM queues past its batch, never refuses: start full
            self.default_concurrency = max(self.default_concurrency, VLLM_START)

    async def close(self) -> None:
        if self._endpoints is not None:
            await self._endpoints.close()

    def check_prompts(self, prompts: list[Prompt]) -> None:
        """Before the run starts: a prompt the model cannot take (too many clips to refuse, too long) is one line."""
        check_prompts(self.name, self.limits, prompts)

    def endpoint_names(self) -> list[str]:
        """One per endpoint: the engine gives each its own concurrency limit and says which one to ask."""
        return [public_url(root) for root in self.roots]

    async def answer(self, prompt: Prompt, endpoint: int | None = None) -> Reply:
        body, notes = audio_request_json(self._request(prompt), prompt, self.merge_over, system=self.system,
                                         text_first=self.text_first)
        i = endpoint if endpoint is not None else 0 if self.following else self._endpoints.take()
        try:
            completion, moved = await self._exchange(i, "POST", "/v1/chat/completions", body)
        finally:
            if endpoint is None and not self.following:
                self._endpoints.give_back(i)
        note = self.origins[i].saw(moved) if moved else None  # another origin answered: said once, and on its record
        if note:
            notes = [*notes, note]
        return reply_from(completion, notes, self.api_model)

    def _request(self, prompt: Prompt) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.api_model, "seed": prompt.seed}
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        if self.logprobs:  # the first token's alternatives, for --judge logprobs
            request |= {"logprobs": True, "top_logprobs": TOP_LOGPROBS}
        return request | self.sampling

    def provenance(self) -> dict:
        return {"backend": self.backend_name, "serve_name": self.serve_name, "endpoint_variable": self.variable,
                "endpoints": [public_url(r) for r in self.roots], "served_model_id": self.api_model,
                "server": self.server, "server_version": self.server_version,
                "temperature": self.temperature, "max_tokens": self.max_tokens, "seed": "passed per request",
                "sampling_sent": {"temperature": self.temperature, **self.sampling},
                "server_decoding": self.server_decoding or self._unreported(),
                "system_prompt": self.system, "text_first": self.text_first, "logprobs": self.logprobs,
                "limits": self.limits.describe(), "serving": self.serving,
                **moved_elsewhere(self.origins),
                **({"registry": str(self.following.where), "replicas": self.following.describe()}
                   if self.following else {})}

    def _unreported(self) -> str:
        if self.server == "vllm":
            return ("not readable over HTTP from vLLM; every request sent all the sampling parameters vLLM would take "
                    "from the checkpoint (sampling_sent), so none of its defaults applied")
        return "not reported by the server"
