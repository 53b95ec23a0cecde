"""What the harness sent of each clip of a request (rate, channels, frames, duration, sha256 of the bytes), kept in
the record so a dropped, downmixed or replaced clip shows in the run's own files."""
from __future__ import annotations

import hashlib
import io
from functools import lru_cache
from typing import Any

from acousticbench.core.records import Prompt
from acousticbench.models.wire import wav_bytes


def clip_print(data: bytes) -> dict[str, Any]:
    """One clip's fingerprint from the WAV bytes that go on the wire."""
    import soundfile as sf

    info = sf.info(io.BytesIO(data))
    return {"sr": info.samplerate, "channels": info.channels, "frames": info.frames,
            "duration_s": round(info.frames / info.samplerate, 4), "sha256": hashlib.sha256(data).hexdigest()}


@lru_cache(maxsize=1024)  # a pack's clips do not change during a run; twins and seeds send the same clip again
def path_print(path: str) -> dict[str, Any]:
    return clip_print(wav_bytes(path))


def sent(prompt: Prompt) -> list[dict[str, Any]]:
    """The fingerprint of each clip the prompt hands its backend, in the order it is heard (an empty list: no audio).
    A backend that merges clips for a single-audio model says so in the record's notes."""
    return [dict(path_print(path)) for path in prompt.audio]
