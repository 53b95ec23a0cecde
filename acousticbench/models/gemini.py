"""Gemini audio models through google-genai: inline WAV parts, safety blocks as refusals, errors classified."""
from __future__ import annotations

import json
import os
import re
from typing import Any

from google import genai
from google.genai import errors, types

from acousticbench.core.errors import BackendError, UserError
from acousticbench.models.base import BackendBase
from acousticbench.models.chat_wire import capped, redact, retry_after_s
from acousticbench.models.completion import server_json, token_count
from acousticbench.models.redirects import Origins, moved_elsewhere
from acousticbench.models.wire import prompt_clips, wav_bytes
from acousticbench.core.records import Prompt, Reply, was_cut

KEY_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY")  # the SDK's order: GOOGLE_API_KEY wins
BASE_URL_VARIABLE = "GOOGLE_GEMINI_BASE_URL"  # the SDK's own override; tests point it at a local server
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
CURRENT_MODEL = "gemini-3-flash-preview"
# a provider's decision not to answer: counted as a refusal, never scored
NEEDED = frozenset({"candidates", "promptFeedback", "prompt_feedback"})  # what a label is read from; the rest may be odd
BLOCKED_FINISH = frozenset({"SAFETY", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "RECITATION", "IMAGE_SAFETY",
                            "IMAGE_PROHIBITED_CONTENT", "MODEL_ARMOR"})


def _transport_errors() -> tuple[type[Exception], ...]:
    found: list[type[Exception]] = []
    for module in ("httpx2", "httpx", "aiohttp"):
        try:
            mod = __import__(module)
        except ImportError:
            continue
        found.append(getattr(mod, "TransportError", None) or getattr(mod, "ClientError"))
    return tuple(found)


def _retry_delay(err: errors.APIError) -> float | None:
    """Retry-After from the headers, else the RetryInfo detail of a RESOURCE_EXHAUSTED body ('12s')."""
    headers = getattr(getattr(err, "response", None), "headers", None)
    from_headers = retry_after_s(headers)
    if from_headers is not None:
        return from_headers
    body = err.details.get("error", err.details) if isinstance(err.details, dict) else {}
    for detail in body.get("details", []) if isinstance(body, dict) else []:
        match = re.fullmatch(r"([\d.]+)s", str(detail.get("retryDelay", ""))) if isinstance(detail, dict) else None
        if match:
            return float(match.group(1))
    return None


def _name(value: Any) -> str | None:
    return getattr(value, "name", None) or (str(value) if value else None)


def _flat_usage(usage: dict) -> dict[str, int]:
    """Token counts, the per-modality lists as 'prompt_tokens_details.AUDIO': audio is priced apart from text."""
    flat = {k: n for k, v in usage.items() if (n := token_count(v)) is not None}  # a negative count is none
    for key, value in usage.items():
        for item in value if isinstance(value, list) else []:
            if isinstance(item, dict) and isinstance(n := token_count(item.get("token_count")), int):
                flat[f"{key}.{_name(item.get('modality'))}"] = n
    return flat


def parsed(body: str | None, where: str) -> types.GenerateContentResponse:
    """The raw answer as the SDK's model; a part the label does not need (usage, the model version) that the SDK
    cannot read is left out rather than failing the answer."""
    from pydantic import ValidationError

    try:
        data = server_json(body or "{}")
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise BackendError(f"{where} sent a malformed response (not a JSON object: {str(body)[:80]!r})", retryable=True)
    while True:
        try:
            return types.GenerateContentResponse.model_validate(data)
        except ValidationError as err:
            odd = {str(e["loc"][0]) for e in err.errors() if e["loc"]}
            if not odd or not odd <= set(data) - NEEDED:
                first = err.errors()[0]
                raise BackendError(f"{where} sent a malformed response ({'.'.join(map(str, first['loc']))}: "
                                   f"{first['msg']})", retryable=True) from None
            data = {k: v for k, v in data.items() if k not in odd}


def reply_from(response: types.GenerateContentResponse, notes: list[str]) -> Reply:
    """A Reply, a refusal (blocked prompt, safety stop), or an error when no text came back."""
    usage = response.usage_metadata.model_dump(exclude_none=True) if response.usage_metadata else {}
    common = {"usage": _flat_usage(usage),
              "model_id": response.model_version, "notes": notes}
    blocked = response.prompt_feedback and _name(response.prompt_feedback.block_reason)
    if blocked:
        return Reply(text=None, refused=True, **common)
    if not response.candidates:
        raise BackendError("Gemini returned no candidates and no block reason (nothing to score)", retryable=False)
    candidate = response.candidates[0]
    finish = _name(candidate.finish_reason)
    common["finish_reason"] = finish
    parts = candidate.content.parts if candidate.content and candidate.content.parts else []
    text = "".join(p.text for p in parts if p.text and not p.thought)
    if finish in BLOCKED_FINISH:
        return Reply(text=text or None, refused=True, **common)
    if not text.strip():
        if was_cut(finish):  # the token limit ended it before any text (thinking took it all): cut, never an answer
            return Reply(text=text, **common)
        raise BackendError(f"Gemini returned no text (finish_reason {finish})", retryable=False)
    text, common["notes"] = capped(text, notes)  # the same stated cap as every chat backend
    return Reply(text=text, **common)


class Gemini(BackendBase):
    """One generate_content call per question; the SDK's own retries stay off (the engine owns retries)."""

    backend_name = "gemini"
    default_concurrency = 8
    adaptive_concurrency = True  # RESOURCE_EXHAUSTED (429) backs off; the quota is found as the run goes

    def __init__(self, name: str, *, api_model: str, endpoint: str | None = None, temperature: float | None = None,
                 max_tokens: int | None = None, **_ignored: Any):
        self.name, self.api_model, self.temperature, self.max_tokens = name, api_model, temperature, max_tokens
        self._key = next((os.environ[v].strip() for v in KEY_VARIABLES if os.environ.get(v, "").strip()), "")
        if not self._key:
            raise UserError(f"{name} needs GEMINI_API_KEY (or GOOGLE_API_KEY): `export GEMINI_API_KEY=...` or put it in .env.")
        self.base_url = (endpoint or os.environ.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL).rstrip("/")
        self._client: genai.Client | None = None
        self._session: Any = None  # the aiohttp session the SDK is given: its trace config sees every request's end
        self._transport = _transport_errors()
        self.served_model_id: str | None = None
        self.origins = Origins(name, self.base_url)  # where the answers really came from, after any redirect

    def _new_client(self) -> genai.Client:
        # one attempt: with aiohttp installed the SDK otherwise retries dropped connections itself, after 1-10 s
        options = types.HttpOptions(base_url=self.base_url, retry_options=types.HttpRetryOptions(attempts=1),
                                    aiohttp_client=self._session)
        return genai.Client(api_key=self._key, http_options=options)

    async def open(self) -> None:
        import aiohttp

        # the SDK's own session settings (no connection limit: the engine bounds what is in flight), and our hook
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), trust_env=True,
                                              trace_configs=[self.origins.trace_config()])
        self._client = self._new_client()
        try:
            with self.origins.opening():  # a server that moved: followed below, not a redirect of answers
                model = await self._client.aio.models.get(model=self.api_model)
            self.served_model_id = " ".join(filter(None, [model.name, model.version])) or self.api_model
            await self._follow(self.origins.last_url())
        except errors.ClientError as err:
            if err.code == 404:
                raise UserError(self._gone()) from None
            if err.code in (400, 401, 403) and "key" in str(err.message).lower():
                raise UserError(f"Gemini rejected the API key ({err.code}): check GEMINI_API_KEY / GOOGLE_API_KEY.") from None
        except ValueError as err:  # a body that is not the JSON promised: the server answered, with something else
            raise UserError(redact(f"{self.base_url} sent {self.name} an answer that is not Gemini's JSON "
                                   f"({type(err).__name__}: {str(err)[:120]}); check that {BASE_URL_VARIABLE} names a "
                                   "Gemini API server.", [self._key])) from None
        except (errors.APIError, *self._transport) as err:
            raise UserError(redact(f"cannot reach Gemini at {self.base_url} ({type(err).__name__}: {err}); "
                                   f"check your network or {BASE_URL_VARIABLE}.", [self._key])) from None

    async def _follow(self, final: str | None) -> None:
        """A server that redirects to another origin: every request goes there, and config.json names both."""
        moved = re.sub(r"/v1\w*/models/[^/]+$", "", (final or self.base_url).split("?")[0])  # the SDK's /{version}/models/..
        if final and self.origins.follow(moved):
            old, self.base_url = self._client, moved
            self._client = self._new_client()
            await old.aio.aclose()  # its own pools; the session it was given stays open for the new client

    def _gone(self) -> str:
        return (f"Gemini does not serve {self.api_model!r}: rerun with --api-model {CURRENT_MODEL} "
                f"(a current model; results then differ from the paper's {self.name}) or pick another --model.")

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aio.aclose()
        if self._session is not None:
            await self._session.close()

    def _config(self, prompt: Prompt) -> types.GenerateContentConfig:
        # the raw answer back too (not sent to the server): the SDK refuses a whole answer over an odd usage block
        return types.GenerateContentConfig(temperature=self.temperature, seed=prompt.seed,
                                           max_output_tokens=self.max_tokens, should_return_http_response=True)

    @staticmethod
    def _contents(prompt: Prompt) -> tuple[list, list[str]]:
        """Inline WAV parts then the question, or the prompt's interleaved parts (AudioICL) in their order."""
        def audio(wav: bytes) -> types.Part:
            return types.Part.from_bytes(data=wav, mime_type="audio/wav")

        if prompt.parts:
            return [audio(wav_bytes(p.audio)) if p.kind == "audio" else (p.text or "") for p in prompt.parts], []
        clips, notes = prompt_clips(prompt.audio, None)
        return [audio(wav) for wav in clips] + [prompt.text], notes

    async def answer(self, prompt: Prompt) -> Reply:
        assert self._client is not None, "open() first"
        contents, notes = self._contents(prompt)
        try:
            response = await self._client.aio.models.generate_content(
                model=self.api_model, contents=contents, config=self._config(prompt))
        except Exception as err:
            raise self._classify(err) from None
        moved = self.origins.note()  # this answer came from another origin than asked: its record says so
        return reply_from(parsed(response.sdk_http_response.body, f"{self.name} at {self.base_url}"),
                          [*notes, moved] if moved else notes)

    def _classify(self, err: Exception) -> BackendError:
        where = f"{self.name} at {self.base_url}"
        if isinstance(err, errors.APIError):
            retryable = err.code in (408, 429) or err.code >= 500
            if err.code == 404:
                return BackendError(self._gone(), retryable=False)
            message = redact(f"{where} answered HTTP {err.code} {err.status}: {err.message}", [self._key])
            return BackendError(message, retryable=retryable, retry_after=_retry_delay(err) if retryable else None,
                                overloaded=err.code in (429, 503))
        if isinstance(err, self._transport):
            return BackendError(f"lost the connection to {where} ({type(err).__name__}: {err})", retryable=True)
        if isinstance(err, ValueError):  # JSONDecodeError, a body the SDK cannot validate
            return BackendError(f"{where} sent a malformed response ({type(err).__name__}: {str(err)[:120]})",
                                retryable=True)
        raise err

    def provenance(self) -> dict:
        return {"backend": self.backend_name, "endpoint": self.base_url, "api_model": self.api_model,
                **moved_elsewhere([self.origins]), "served_model_id": self.served_model_id,
                "temperature": self.temperature if self.temperature is not None else "provider default (1.0)",
                "max_output_tokens": self.max_tokens, "thinking": "provider default", "seed": "passed per request"}
