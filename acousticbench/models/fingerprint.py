"""What the harness sent of each clip of a request (rate, channels, frames, duration, sha256 of the bytes), kept in
the record so a dropped, downmixed or replaced clip shows in the run's own files."""
from __future__ import annotations

import hashlib
import io
import struct
from functools import lru_cache
from typing import Any

from acousticbench.core.records import Prompt
from acousticbench.models.wire import wav_bytes


def clip_print(data: bytes) -> dict[str, Any]:
    """One clip's fingerprint from the WAV bytes that go on the wire."""
    sr, channels, frames = _pcm_header(data) or _decoded(data)
    return {"sr": sr, "channels": channels, "frames": frames, "duration_s": round(frames / sr, 4),
            "sha256": hashlib.sha256(data).hexdigest()}


def _pcm_header(data: bytes) -> tuple[int, int, int] | None:
    """(rate, channels, frames) read from a plain PCM WAV's chunks (a header, not the samples); None for others."""
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    at, fmt = 12, None
    while at + 8 <= len(data):
        kind, size = data[at:at + 4], struct.unpack_from("<I", data, at + 4)[0]
        if kind == b"fmt " and size >= 16:
            fmt = struct.unpack_from("<HHIIHH", data, at + 8)
        elif kind == b"data" and fmt is not None and fmt[0] == 1 and fmt[1] and fmt[5]:
            size = min(size, len(data) - at - 8)  # a header that overstates its data: what is there is sent
            return fmt[2], fmt[1], size // (fmt[1] * fmt[5] // 8)
        at += 8 + size + (size & 1)
    return None


def _decoded(data: bytes) -> tuple[int, int, int]:
    import soundfile as sf

    info = sf.info(io.BytesIO(data))
    return info.samplerate, info.channels, info.frames


@lru_cache(maxsize=1024)  # a pack's clips do not change during a run; twins and seeds send the same clip again
def path_print(path: str) -> dict[str, Any]:
    return clip_print(wav_bytes(path))


def sent(prompt: Prompt, merge_over: int | None = None) -> list[dict[str, Any]]:
    """The fingerprint of each clip that goes on the wire for the prompt, in the order it is heard (an empty list: no
    audio): one merged clip where the backend merges more than `merge_over` clips for a single-audio model (its
    Backend.merge_over; the record's notes say so too)."""
    if merge_over is not None and len(prompt.audio) > merge_over:
        from acousticbench.models.wire import merged_wav

        return [clip_print(merged_wav(prompt.audio))]
    return [dict(path_print(path)) for path in prompt.audio]
