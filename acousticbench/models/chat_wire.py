"""The chat-completions wire format without any SDK: audio request bodies, replies, Retry-After, redaction.
Shared by the OpenAI-compatible backend (plain aiohttp) and the openai SDK backends."""
from __future__ import annotations

import email.utils
import functools
import json
import re
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

from acousticbench.core.errors import BackendError
from acousticbench.models.wire import prompt_clips, wav_bytes
from acousticbench.core.records import Prompt, Reply, was_cut
from acousticbench.models.completion import (content_text, first_choice, first_token_logprobs, flat_usage,
                                             GarbledBody, NOT_UTF8, message_of, refusal_text, server_json)

# the statuses worth asking again: timeouts, conflicts, rate limits, and every 5xx
RETRYABLE_STATUS = frozenset({408, 409, 429})
# A reply is stored up to this many characters (ACOUSTICBENCH_MAX_REPLY_CHARS): an A/B answer or an AudioICL label
# with its reasoning fits in a few thousand; a server that runs away must not fill the disk.
MAX_REPLY_CHARS = 65_536
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # invalid Unicode a reply may carry (core/jsontext.py stores it)


def retryable_status(code: int) -> bool:
    """Whether an HTTP error status is worth asking again (RETRYABLE_STATUS or any 5xx)."""
    return code in RETRYABLE_STATUS or code >= 500


# the statuses that say "too many at once, later": rate limits and an overloaded engine (vLLM, a busy gateway)
OVERLOAD_STATUS = frozenset({429, 503})
# finish reasons of an answer the server itself broke off: Mistral's "error", vLLM's "abort" (asked again)
FAILED_FINISH = frozenset({"error", "abort"})


_AUDIO_HEAD, _AUDIO_TAIL = b'{"type":"input_audio","input_audio":{"data":"', b'","format":"wav"}}'


@functools.cache
def _b64encode() -> Callable[[bytes], bytes]:
    """pybase64's SIMD base64 where installed (the api extra), else the standard library's: the same bytes for a
    fraction of the CPU."""
    try:
        from pybase64 import b64encode
    except ImportError:
        from base64 import b64encode
    return b64encode


def _audio_part(wav: bytes) -> tuple[bytes, ...]:
    """The pieces of one input_audio part: joined once with the whole body, never copied on their own."""
    return _AUDIO_HEAD, _b64encode()(wav), _AUDIO_TAIL


@functools.lru_cache(maxsize=256)  # a task's questions share a few prompt texts: encoded once, not per request
def _text_part(text: str) -> tuple[bytes]:
    return (json.dumps({"type": "text", "text": text}, ensure_ascii=False, allow_nan=False).encode(),)


def audio_request_json(fields: dict[str, Any], prompt: Prompt, merge_over: int | None = None, *,
                       system: str | None = None, text_first: bool = False) -> tuple[bytes, list[str]]:
    """The chat-completions body: `fields`, then (with `system`) a system turn, and one user message with an
    input_audio part per clip (plain base64 WAV, in listening order) and the question text (before the clips with
    `text_first`, as some vendors order a turn), or the prompt's interleaved parts (AudioICL) in their order.
    Spliced by hand around the base64, which never needs JSON escaping, so json.dumps never walks it. Over
    `merge_over` clips, all go as one merged clip beside the flat text."""
    if prompt.parts and (merge_over is None or len(prompt.audio) <= merge_over):
        pieces = [_audio_part(wav_bytes(p.audio)) if p.kind == "audio" else _text_part(p.text or "")
                  for p in prompt.parts]
        notes: list[str] = []
    else:
        clips, notes = prompt_clips(prompt.audio, merge_over)
        audio = [_audio_part(wav) for wav in clips]
        pieces = [_text_part(prompt.text), *audio] if text_first else [*audio, _text_part(prompt.text)]
    head = json.dumps({**fields, "messages": []}, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    body = [head[:-len(b"[]}")], b"["]  # the messages go last
    if system is not None:
        body += [json.dumps({"role": "system", "content": system}, ensure_ascii=False, allow_nan=False).encode(), b","]
    body.append(b'{"role":"user","content":[')
    for k, piece in enumerate(pieces):
        body += piece if k == 0 else [b",", *piece]
    body.append(b"]}]}")
    return b"".join(body), notes  # one copy of the base64, not one per concatenation


def capped(text: str | None, notes: list[str]) -> tuple[str | None, list[str]]:
    """The reply text as it is stored: cut at the stated cap, with a note saying so and how long it was, and a note
    where it holds characters that are not valid Unicode (kept as sent)."""
    from acousticbench.core.environment import env_number

    invalid = len(LONE_SURROGATE.findall(text)) if text else 0
    if invalid:
        notes = [*notes, f"{invalid} character(s) of the reply are not valid Unicode (lone surrogates, or bytes that "
                         "were not UTF-8): stored as sent, as \\uXXXX escapes in the JSON"]
    cap = int(env_number("ACOUSTICBENCH_MAX_REPLY_CHARS", MAX_REPLY_CHARS))
    if text is None or len(text) <= cap:
        return text, notes
    return text[:cap], [*notes, f"reply cut to its first {cap} of {len(text)} characters "
                                f"(ACOUSTICBENCH_MAX_REPLY_CHARS)"]


def model_note(served: object, asked: str | None) -> list[str]:
    """A note when the server says another model answered than the one asked (a dated snapshot of it is the same)."""
    if not asked or not isinstance(served, str) or not served or served == asked or served.startswith(f"{asked}-"):
        return []
    return [f"the server answered as model {served!r}, not {asked!r} as asked"]


def reply_from(completion: object, notes: list[str] | None = None, asked: str | None = None) -> Reply:
    """A Reply, a refusal, or an error from a chat completion (the JSON body as a dict, or the SDK's model of it):
    an empty answer is never passed on as an answer (one the token limit cut before any text is a cut reply); a
    reply over the cap is cut with a note, and a reply from another model than `asked` is noted. Fields the label
    does not need (usage, logprobs, the model's name) are read where they make sense and never fail a reply."""
    unreadable = NOT_UTF8 if isinstance(completion, GarbledBody) else None
    if hasattr(completion, "model_dump"):  # the openai SDK's model of it
        completion = completion.model_dump()
    if isinstance(completion, str):  # the SDK hands back the text of a body not labelled JSON: read it as JSON
        try:
            completion = server_json(completion)
        except ValueError:
            pass
    if not isinstance(completion, dict) or "choices" not in completion:  # the SDK hands back text for non-JSON
        raise BackendError(f"the server's answer is not a chat completion: {str(completion)[:120]!r}", retryable=True)
    choice = first_choice(completion)
    if choice is None:
        raise BackendError("the server returned no choices (nothing to score)", retryable=False)
    message, model = message_of(choice), completion.get("model")
    model = model if isinstance(model, str) else None
    notes = [*(notes or []), *model_note(model, asked)]
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    common = {"usage": flat_usage(completion.get("usage")), "model_id": model, "finish_reason": finish,
              "first_token_logprobs": first_token_logprobs(choice.get("logprobs")), "unreadable": unreadable}
    notes = [*notes, unreadable] if unreadable else notes
    content, refusal = content_text(message, choice), message.get("refusal")
    said = (finish or "").strip().lower()
    if said in FAILED_FINISH:  # the server gave up on this answer mid-way: what it holds is no answer
        raise BackendError(f"the server stopped the answer itself (finish_reason {finish!r}) before it was done",
                           retryable=True)
    if refusal or said == "content_filter":
        text, notes = capped(refusal_text(refusal) or content, notes)
        return Reply(text=text, refused=True, notes=notes, **common)
    if content is None or not content.strip():
        if was_cut(finish):  # the token limit ended it before any text (a thinking model): cut, never an answer
            return Reply(text=content or "", notes=notes, **common)
        raise BackendError(f"the model returned no text (finish_reason {finish!r})", retryable=False)
    text, notes = capped(content, notes)
    return Reply(text=text, notes=notes, **common)


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


def redact(text: str, secrets: list[str]) -> str:
    """Remove secrets from a message a server may have echoed them into."""
    for secret in secrets:
        if secret and len(secret) >= 8:
            text = text.replace(secret, "***")
    return text


def public_url(url: str) -> str:
    """The URL without any user:password part, for config.json."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
