"""An OpenAI chat-completions request body, checked and decoded into a Chat for a model adapter."""
from __future__ import annotations

import base64
import binascii
import io
from typing import Any

import numpy as np

from acousticbench.serve.adapters import Chat, Turn

SAMPLE_RATE = 16_000  # every adapter takes mono float32 at 16 kHz
MAX_TOKENS_CAP = 4096
DEFAULT_MAX_TOKENS = 256


class BadRequest(ValueError):
    """The request cannot be served as sent; `param` names the field, as OpenAI's error body does."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


def decode_audio(part: dict[str, Any], where: str, max_audio_s: float) -> np.ndarray:
    """input_audio -> mono float32 at 16 kHz; a 400 that says what is wrong with the clip otherwise."""
    import soundfile as sf

    audio = part.get("input_audio")
    if not isinstance(audio, dict) or not isinstance(audio.get("data"), str):
        raise BadRequest(f"{where}: input_audio needs {{'data': <base64>, 'format': 'wav'}}", where)
    fmt = audio.get("format", "wav")
    if fmt not in ("wav", "mp3"):
        raise BadRequest(f"{where}: format {fmt!r} is not supported; send wav (or mp3)", where)
    try:
        raw = base64.b64decode(audio["data"], validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest(f"{where}: input_audio.data is not valid base64", where) from None
    if not raw:
        raise BadRequest(f"{where}: the audio is empty (no bytes)", where)
    if fmt == "wav" and not (raw[:4] == b"RIFF" and raw[8:12] == b"WAVE"):
        raise BadRequest(f"{where}: the audio is not a WAV file (no RIFF/WAVE header)", where)
    try:
        info = sf.info(io.BytesIO(raw))
        if info.frames == 0:
            raise BadRequest(f"{where}: the audio is empty (0 samples)", where)
        if info.frames / info.samplerate > max_audio_s:
            raise BadRequest(f"{where}: the clip lasts {info.frames / info.samplerate:.1f} s; this server takes at "
                             f"most {max_audio_s:g} s per clip", where)
        samples, rate = sf.read(io.BytesIO(raw), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError) as err:
        detail = str(err).split(">: ", 1)[-1]  # drop libsndfile's "Error opening <_io.BytesIO object at 0x...>"
        raise BadRequest(f"{where}: the audio could not be decoded ({detail})", where) from None
    mono = samples.mean(axis=1)  # the audio models here listen in mono
    if rate != SAMPLE_RATE:
        import soxr

        mono = soxr.resample(mono, rate, SAMPLE_RATE)
    return np.ascontiguousarray(mono, dtype=np.float32)


def _parts(content: Any, where: str, max_audio_s: float) -> list[str | np.ndarray]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise BadRequest(f"{where}.content must be a string or a list of parts", where)
    parts: list[str | np.ndarray] = []
    for j, part in enumerate(content):
        here = f"{where}.content[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif kind == "input_audio":
            parts.append(decode_audio(part, here, max_audio_s))
        else:
            raise BadRequest(f"{here}: unsupported part {kind!r}; send text or input_audio parts", here)
    return parts


def _max_tokens(body: dict[str, Any]) -> int:
    value = body.get("max_completion_tokens", body.get("max_tokens"))
    if value is None:
        return DEFAULT_MAX_TOKENS
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_TOKENS_CAP:
        raise BadRequest(f"max_tokens must be a whole number from 1 to {MAX_TOKENS_CAP}", "max_tokens")
    return value


def parse_chat(body: Any, max_audio_s: float) -> Chat:
    """The request as turns of text and audio; decoding is greedy whatever `temperature` says."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list", "messages")
    turns = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
            raise BadRequest(f"{where}: role must be system, user or assistant", where)
        turns.append(Turn(message["role"], _parts(message.get("content"), where, max_audio_s)))
    seed = body.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise BadRequest("seed must be a whole number", "seed")
    return Chat(turns=turns, max_tokens=_max_tokens(body), seed=seed)
