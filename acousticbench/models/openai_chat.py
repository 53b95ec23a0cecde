"""The openai SDK backends: one client per endpoint, SDK failures classified, never retried."""
from __future__ import annotations

import importlib.util
from typing import Any

import openai

from acousticbench.core.errors import BackendError
from acousticbench.models.base import BackendBase
from acousticbench.models.redirects import Origins
from acousticbench.models.chat_wire import (OVERLOAD_STATUS, audio_request_json, redact, reply_from, retry_after_s,
                                           retryable_status)
from acousticbench.core.records import Prompt, Reply


def transport_errors() -> tuple[type[Exception], ...]:
    """What the SDK's aiohttp transport lets through unwrapped: a reply that is not HTTP (a garbled status line or
    chunk) reaches the caller as aiohttp's own error, not as one of the SDK's."""
    try:
        import aiohttp
    except ImportError:
        return ()
    return (aiohttp.ClientError,)


# every failure a request through the SDK can raise, whatever its transport
SDK_ERRORS: tuple[type[Exception], ...] = (openai.OpenAIError, ValueError, *transport_errors())


def make_client(base_url: str, api_key: str, origins: Origins | None = None) -> openai.AsyncOpenAI:
    """An SDK client that never retries (the engine does), on the SDK's aiohttp transport when installed: its
    connection pool costs less CPU per request than the default one with many requests in flight. `origins` hears
    every response through the client's own event hook: a redirect to another origin is noticed on any request."""
    hooks = {"response": [origins.httpx_hook]} if origins is not None else {}
    try:
        http_client = openai.DefaultAioHttpClient(event_hooks=hooks) if importlib.util.find_spec("aiohttp") else None
    except RuntimeError:
        http_client = None
    http_client = http_client or openai.DefaultAsyncHttpxClient(event_hooks=hooks)
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, http_client=http_client)


def _detail(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        body = body.get("error", body)
        if isinstance(body, dict) and body.get("message"):
            return str(body["message"])
    return str(body or err.message)[:300]


def _root_cause(err: BaseException) -> BaseException:
    while err.__cause__ is not None:
        err = err.__cause__
    return err


def classify(err: Exception, where: str) -> BackendError:
    """Turn an openai SDK failure into a BackendError that says whether asking again can help."""
    if isinstance(err, openai.APIConnectionError):
        cause = _root_cause(err)
        if isinstance(cause, TimeoutError) or (cause is err and isinstance(err, openai.APITimeoutError)):
            return BackendError(f"{where} did not answer in time", retryable=True)
        # named by the root cause: the aiohttp transport reports a dropped connection as a connect timeout
        return BackendError(f"lost the connection to {where} ({type(cause).__name__}: {cause})", retryable=True)
    if isinstance(err, openai.APIStatusError):
        status = err.status_code
        retryable = retryable_status(status)
        retry_after = retry_after_s(err.response.headers) if retryable else None
        return BackendError(f"{where} answered HTTP {status}: {_detail(err)}", retryable=retryable, retry_after=retry_after,
                            overloaded=status in OVERLOAD_STATUS)
    if isinstance(err, (ValueError, openai.APIResponseValidationError)):  # a body that is not the JSON promised
        return BackendError(f"{where} sent a malformed response ({type(err).__name__}: {str(err)[:120]})", retryable=True)
    if isinstance(err, transport_errors()):  # the transport's own: a reply that is not HTTP, a dropped connection
        detail = " ".join(str(getattr(err, "message", "") or err).split())[:120]
        return BackendError(f"{where} sent a reply that is not HTTP or dropped it ({type(err).__name__}: {detail})",
                            retryable=True)
    raise err


class ChatCompletionsBackend(BackendBase):
    """An audio chat model behind the openai SDK: one request per question, failures classified, never retried."""

    default_concurrency = 8
    adaptive_concurrency = True  # an API's rate limit is found as the run goes (429s back off)
    merge_over: int | None = None  # the OpenAI API takes every clip
    api_model: str = ""
    origins: Origins | None = None  # where the answers really came from (the client's event hook tells it)

    def _pick(self) -> tuple[openai.AsyncOpenAI, str, Any]:
        """The client to use, how to name it in messages, and a slot handed back to _release."""
        raise NotImplementedError

    def _release(self, slot: Any) -> None:
        return None

    def _request(self, prompt: Prompt) -> dict[str, Any]:
        """The request's fields besides the messages: model, seed, decoding settings."""
        raise NotImplementedError

    def _explain(self, error: BackendError, err: Exception) -> BackendError:
        return error

    def _secrets(self) -> list[str]:
        return []

    async def answer(self, prompt: Prompt) -> Reply:
        body, notes = audio_request_json(self._request(prompt), prompt, self.merge_over)
        client, where, slot = self._pick()
        try:
            # the SDK's own post (its errors and headers), not create(): create() walks every message part, base64
            # included, and builds a response model; the body comes back as a dict that reply_from reads
            completion = await client.post("/chat/completions", content=body, cast_to=object)
        except SDK_ERRORS as err:
            error = self._explain(classify(err, where), err)
            raise BackendError(redact(str(error), self._secrets()), retryable=error.retryable,
                               retry_after=error.retry_after, overloaded=error.overloaded) from None
        except RecursionError:  # the SDK's json.loads of a body nested past its depth: a malformed answer
            raise BackendError(f"{where} sent a malformed response (nested deeper than Python's JSON reader can "
                               "follow, which no answer is)", retryable=True) from None
        finally:
            self._release(slot)
        moved = self.origins.note() if self.origins is not None else None
        return reply_from(completion, [*notes, moved] if moved else notes, self.api_model)
