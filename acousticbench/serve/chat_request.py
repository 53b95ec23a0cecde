"""An OpenAI chat-completions request body, checked and decoded into a Chat for a model adapter."""
from __future__ import annotations

import base64
import binascii
import io
from typing import Any

import numpy as np

from acousticbench.core.wav import is_riff_wave, wav_layout
from acousticbench.serve.adapters import Chat, Turn

SAMPLE_RATE = 16_000  # every adapter takes mono float32 at 16 kHz
MIN_AUDIO_S = 0.1  # shorter clips give Qwen2-Audio's encoder no frame at all (it fails below 0.06 s)
UNKNOWN_LENGTH = 0x7FFFF000  # data sizes from here up are placeholders of WAVs written to a pipe
MAX_TOKENS_CAP = 4096
DEFAULT_MAX_TOKENS = 256


class BadRequest(ValueError):
    """The request cannot be served as sent; `param` names the field, as OpenAI's error body does."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


def decode_audio(part: dict[str, Any], where: str, max_audio_s: float) -> np.ndarray:
    """input_audio -> mono float32 at 16 kHz; a 400 that says what is wrong with the clip otherwise."""
    audio = part.get("input_audio")
    if not isinstance(audio, dict) or not isinstance(audio.get("data"), str):
        raise BadRequest(f"{where}: input_audio needs {{'data': <base64>, 'format': 'wav'}}", where)
    fmt = audio.get("format", "wav")
    if fmt not in ("wav", "mp3"):
        raise BadRequest(f"{where}: format {fmt!r} is not supported; send wav (or mp3)", where)
    raw = _bytes(audio["data"], where)
    if fmt == "wav":
        _check_wav(raw, where)
    samples, rate = _read(raw, fmt, where, max_audio_s)
    mono = samples.mean(axis=1)  # the audio models here listen in mono
    if not np.isfinite(mono).all():
        raise BadRequest(f"{where}: the audio holds NaN or infinite samples", where)
    if rate != SAMPLE_RATE:
        import soxr

        mono = soxr.resample(mono, rate, SAMPLE_RATE)
    return np.ascontiguousarray(mono, dtype=np.float32)


def _bytes(data: str, where: str) -> bytes:
    if data.startswith("data:"):
        raise BadRequest(f"{where}: input_audio.data must be plain base64, without a 'data:...;base64,' prefix", where)
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest(f"{where}: input_audio.data is not valid base64", where) from None
    if not raw:
        raise BadRequest(f"{where}: the audio is empty (no bytes)", where)
    return raw


def _check_wav(raw: bytes, where: str) -> None:
    """A RIFF/WAVE header, and a data chunk holding every byte its header announces (libsndfile reads a cut file)."""
    if not is_riff_wave(raw):
        raise BadRequest(f"{where}: the audio is not a WAV file (no RIFF/WAVE header)", where)
    layout = wav_layout(raw)
    if layout is None:
        return  # no data chunk: libsndfile says what is wrong
    size, present = layout.data_size, len(raw) - layout.data_offset
    if 0 < size < UNKNOWN_LENGTH and present < size:  # a streamed WAV announces 0 or 0xFFFFFFFF: unknown
        raise BadRequest(f"{where}: the WAV file is truncated: its header announces {size} bytes of samples, "
                         f"the request holds {present}", where)


def _read(raw: bytes, fmt: str, where: str, max_audio_s: float) -> tuple[np.ndarray, int]:
    import soundfile as sf

    try:
        info = sf.info(io.BytesIO(raw))
        if info.frames == 0:
            raise BadRequest(f"{where}: the audio is empty (0 samples)", where)
        seconds = info.frames / info.samplerate
        if seconds > max_audio_s:
            raise BadRequest(f"{where}: the clip lasts {seconds:.1f} s; this server takes at most {max_audio_s:g} s "
                             "per clip", where)
        if seconds < MIN_AUDIO_S:
            raise BadRequest(f"{where}: the clip lasts {seconds:.3f} s; this server takes clips of at least "
                             f"{MIN_AUDIO_S:g} s", where)
        return sf.read(io.BytesIO(raw), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError) as err:
        detail = str(err).split(">: ", 1)[-1]  # drop libsndfile's "Error opening <_io.BytesIO object at 0x...>"
        if "does not exist" in detail:  # what libsndfile says of bytes its mp3 decoder cannot read
            detail = f"not a readable {fmt} stream"
        raise BadRequest(f"{where}: the audio could not be decoded ({detail})", where) from None


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
    if seed is not None and not -(2**63) <= seed < 2**63:  # vLLM's range (int64); torch.manual_seed would raise: a 500
        raise BadRequest("seed must fit in 64 bits (-2**63 .. 2**63 - 1)", "seed")
    return Chat(turns=turns, max_tokens=_max_tokens(body), seed=seed, top_logprobs=_top_logprobs(body))


def _top_logprobs(body: dict[str, Any]) -> int | None:
    """OpenAI's logprobs (true/false) and top_logprobs (0-20): how many alternatives per token, or None."""
    wanted, top = body.get("logprobs"), body.get("top_logprobs")
    if wanted not in (None, True, False):
        raise BadRequest("logprobs must be true or false", "logprobs")
    if top is not None and (not isinstance(top, int) or isinstance(top, bool) or not 0 <= top <= 20):
        raise BadRequest("top_logprobs must be a whole number from 0 to 20", "top_logprobs")
    if top is not None and not wanted:
        raise BadRequest("top_logprobs needs logprobs: true", "top_logprobs")
    return (top or 0) if wanted else None
