"""The chat-completions wire format (audio messages, replies, error classes) and the openai SDK backends built on it."""
from __future__ import annotations

import base64
import email.utils
import importlib.util
import json
import time
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from acousticbench.errors import BackendError
from acousticbench.models.wire import prompt_clips, wav_bytes
from acousticbench.records import Prompt, Reply

# the statuses worth asking again: timeouts, conflicts, rate limits, and every 5xx
RETRYABLE_STATUS = frozenset({408, 409, 429})


def make_client(base_url: str, api_key: str) -> openai.AsyncOpenAI:
    """An SDK client that never retries (the engine does), on the SDK's aiohttp transport when installed:
    its connection pool cost a third less CPU per request than the default one at 64 in flight (bench/bench_engine.py)."""
    try:
        http_client = openai.DefaultAioHttpClient() if importlib.util.find_spec("aiohttp") else None
    except RuntimeError:
        http_client = None
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, http_client=http_client)


def _audio_part(wav: bytes) -> bytes:
    return b'{"type":"input_audio","input_audio":{"data":"' + base64.b64encode(wav) + b'","format":"wav"}}'


def _text_part(text: str) -> bytes:
    return json.dumps({"type": "text", "text": text}, ensure_ascii=False).encode()


def audio_request_json(fields: dict[str, Any], prompt: Prompt, single_audio: bool = False) -> tuple[bytes, list[str]]:
    """The chat-completions body: `fields`, then one user message with an input_audio part per clip (plain base64
    WAV, in listening order) and the question text, or the prompt's interleaved parts (AudioICL) in their order.
    Spliced by hand around the base64, which never needs JSON escaping: json.dumps over ~170 KB of it cost 0.4 ms
    per request (bench/bench_engine.py)."""
    if prompt.parts and not single_audio:
        pieces = [_audio_part(wav_bytes(p.audio)) if p.kind == "audio" else _text_part(p.text or "")
                  for p in prompt.parts]
        notes: list[str] = []
    else:
        clips, notes = prompt_clips(prompt.audio, single_audio)
        pieces = [_audio_part(wav) for wav in clips] + [_text_part(prompt.text)]
    head = json.dumps({**fields, "messages": []}, ensure_ascii=False, separators=(",", ":")).encode()
    content = b'[{"role":"user","content":[' + b",".join(pieces) + b"]}]}"
    return head[:-len(b"[]}")] + content, notes  # the messages go last


def reply_from(completion: object, notes: list[str] | None = None) -> Reply:
    """A Reply, a refusal, or an error from a chat completion (the JSON body as a dict, or the SDK's model of it):
    an empty answer is never passed on as an answer."""
    if isinstance(completion, ChatCompletion):
        completion = completion.model_dump()
    if not isinstance(completion, dict) or "choices" not in completion:  # the SDK hands back text for non-JSON
        raise BackendError(f"the server's answer is not a chat completion: {str(completion)[:120]!r}", retryable=True)
    if not completion["choices"]:
        raise BackendError("the server returned no choices (nothing to score)", retryable=False)
    choice = completion["choices"][0]
    message = choice.get("message") or {}
    usage = {k: v for k, v in (completion.get("usage") or {}).items() if isinstance(v, int)}
    common = {"usage": usage, "model_id": completion.get("model"), "notes": notes or []}
    content, finish = message.get("content"), choice.get("finish_reason")
    if message.get("refusal") or finish == "content_filter":
        return Reply(text=message.get("refusal") or content, refused=True, **common)
    if not isinstance(content, str) or not content.strip():
        raise BackendError(f"the model returned no text (finish_reason {finish!r})", retryable=False)
    return Reply(text=content, **common)


def retry_after_s(headers: Any) -> float | None:
    """Seconds a server asked us to wait: retry-after-ms, or Retry-After as seconds or an HTTP date."""
    if headers is None:
        return None
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


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
        retryable = status in RETRYABLE_STATUS or status >= 500
        retry_after = retry_after_s(err.response.headers) if retryable else None
        return BackendError(f"{where} answered HTTP {status}: {_detail(err)}", retryable=retryable, retry_after=retry_after)
    if isinstance(err, (ValueError, openai.APIResponseValidationError)):  # a body that is not the JSON promised
        return BackendError(f"{where} sent a malformed response ({type(err).__name__}: {str(err)[:120]})", retryable=True)
    raise err


def redact(text: str, secrets: list[str]) -> str:
    """Remove secrets from a message a server may have echoed them into."""
    for secret in secrets:
        if secret and len(secret) >= 8:
            text = text.replace(secret, "***")
    return text


class ChatCompletionsBackend:
    """An audio chat model behind the openai SDK: one request per question, failures classified, never retried."""

    default_concurrency = 8
    single_audio = False
    api_model: str = ""

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
        body, notes = audio_request_json(self._request(prompt), prompt, self.single_audio)
        client, where, slot = self._pick()
        try:
            # the SDK's own post (its errors and headers), not create(): create()'s TypedDict transform walked every
            # message part (~3 ms of CPU per request), and building its response model cost ~0.4 ms more; the body
            # comes back as a dict that reply_from reads (bench/bench_engine.py)
            completion = await client.post("/chat/completions", content=body, cast_to=object)
        except (openai.OpenAIError, ValueError) as err:
            error = self._explain(classify(err, where), err)
            raise BackendError(redact(str(error), self._secrets()), retryable=error.retryable,
                               retry_after=error.retry_after) from None
        finally:
            self._release(slot)
        return reply_from(completion, notes)
