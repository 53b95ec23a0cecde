"""The parts of a chat completion read as a server may really send them: text as a string or a list of parts, token
counts from whatever usage block came, the first token's logprobs in either of OpenAI's layouts. A part the harness
does not need for the label never turns an answer into an error; only a completion with no reply in it is one."""
from __future__ import annotations

import json
import math
from typing import Any

from acousticbench.core.errors import BackendError

TEXT_PARTS = frozenset({"text", "output_text"})  # the part types that carry the answer in a list of content parts


def _shape(value: Any) -> str:
    """A JSON value's kind, in JSON's words."""
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


def first_choice(completion: dict) -> dict | None:
    """The completion's first choice; None when there is none (an empty list, null); a choice that is not an object
    is a malformed answer, worth asking again."""
    choices = completion.get("choices")
    if not choices:
        return None
    if not isinstance(choices, list) or not isinstance(choices[0], dict):
        shape = f"choices[0] is {_shape(choices[0])}" if isinstance(choices, list) else f"choices is {_shape(choices)}"
        raise BackendError(f"the server's answer is not a chat completion ({shape}; a list of objects was expected)",
                           retryable=True)
    return choices[0]


def message_of(choice: dict) -> dict:
    message = choice.get("message")
    return message if isinstance(message, dict) else {}


def content_text(message: dict, choice: dict) -> str | None:
    """The reply text: `content` as a string, or its text parts joined (a list of parts, as some servers send it),
    or a legacy completion's `text`; None when there is none."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [part if isinstance(part, str) else part.get("text") for part in content
                 if isinstance(part, str) or (isinstance(part, dict) and part.get("type", "text") in TEXT_PARTS)]
        texts = [text for text in texts if isinstance(text, str)]
        return "".join(texts) if texts else None
    legacy = choice.get("text")
    return legacy if isinstance(legacy, str) else None


def refusal_text(refusal: Any) -> str | None:
    """A refusal's words: the string itself, or the `message`/`reason` of an object; None when it says none."""
    if isinstance(refusal, str):
        return refusal or None
    if isinstance(refusal, dict):
        words = refusal.get("message") or refusal.get("reason")
        return words if isinstance(words, str) and words else None
    return None


class GarbledBody(dict):
    """A JSON object read from a body that was not UTF-8 (its bytes kept as lone surrogates): garbled on its way, so
    what it says is kept but never taken as an answer."""


NOT_UTF8 = "the server's body was not UTF-8 (garbled on its way): its text is kept as sent, never scored"


def server_json(raw: bytes | str) -> Any:
    """json.loads of what a server sent; a body nested deeper than the reader can follow (a hostile or broken
    server's `[[[[...`) is a ValueError, as malformed JSON is, never a RecursionError."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("nested deeper than Python's JSON reader can follow, which no answer is") from None


MOST_TOKENS = 100_000_000  # per request: ten times the largest context window of any model; more is no count


def token_count(value: Any) -> int | None:
    """A token count as a server may write it (12, 12.0, "12"); None for anything that is not a whole number from 0
    to MOST_TOKENS (a negative count would price a run below nothing, an absurd one at more than the world's GDP)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():  # '²' is a digit to isdigit
        value = int(value.strip())
    return value if isinstance(value, int) and 0 <= value <= MOST_TOKENS else None


def flat_usage(usage: Any) -> dict[str, int]:
    """The provider's token counts, nested details as 'prompt_tokens_details.audio_tokens' (the audio share is
    priced apart from the text); what is not a count (a null block, a string, a list) is left out."""
    flat: dict[str, int] = {}
    for key, value in (usage.items() if isinstance(usage, dict) else ()):
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": n for k, v in value.items() if (n := token_count(v)) is not None})
        elif (n := token_count(value)) is not None:
            flat[str(key)] = n
    return flat


def first_token_logprobs(logprobs: Any) -> dict[str, float] | None:
    """The first generated token's alternatives as {token text: logprob}, from `logprobs.content[0].top_logprobs`
    (a list of {token, logprob}, or the legacy {token: logprob}); ids that decode to the same text pool their
    probability. None when the server sent none, or nothing readable."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return None
    top = content[0].get("top_logprobs")
    pairs = top.items() if isinstance(top, dict) else [
        (alt.get("token"), alt.get("logprob")) for alt in top if isinstance(alt, dict)] if isinstance(top, list) else []
    pooled: dict[str, float] = {}
    for token, value in pairs:  # an impossible value (NaN, +inf, above 0) is kept as sent: the judge refuses it
        if isinstance(token, str) and isinstance(value, (int, float)) and not isinstance(value, bool):
            pooled[token] = _log_add(pooled[token], value) if token in pooled else float(value)
    return pooled or None


def _log_add(a: float, b: float) -> float:
    if not (math.isfinite(a) and math.isfinite(b)):  # NaN or an infinity stays what it was, for the judge to see
        return a + b if math.isnan(a + b) or a == b else max(a, b)
    return max(a, b) + math.log1p(math.exp(-abs(a - b)))
