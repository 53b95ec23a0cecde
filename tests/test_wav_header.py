"""A WAV's layout read from its first bytes (wav.wav_layout): what the harness measures clip lengths with and what
our server checks a request's clips with."""
from __future__ import annotations

import io

import numpy as np
import soundfile as sf

from acousticbench.core.wav import wav_layout
from acousticbench.models.limits import clip_seconds


def wav_bytes(frames: int, rate: int, channels: int, extra_chunk: bytes = b"") -> bytes:
    """A PCM16 WAV, with `extra_chunk` (an odd-sized one is padded, as RIFF wants) between 'fmt ' and 'data'."""
    buffer = io.BytesIO()
    sf.write(buffer, np.zeros((frames, channels), dtype=np.float32), rate, subtype="PCM_16", format="WAV")
    raw = buffer.getvalue()
    at = raw.index(b"data")
    chunk = b"LIST" + len(extra_chunk).to_bytes(4, "little") + extra_chunk + b"\0" * (len(extra_chunk) & 1)
    return raw[:at] + (chunk if extra_chunk else b"") + raw[at:]


def test_the_layout_of_a_stereo_wav_with_a_padded_chunk_before_its_samples(tmp_path):
    raw = wav_bytes(22_050, 22_050, 2, extra_chunk=b"odd")
    layout = wav_layout(raw[:200])
    assert layout is not None and (layout.channels, layout.rate, layout.block_align) == (2, 22_050, 4)
    assert layout.data_size == 22_050 * 4 and raw[layout.data_offset - 8 : layout.data_offset - 4] == b"data"
    path = tmp_path / "clip.wav"
    path.write_bytes(raw)
    assert clip_seconds(str(path)) == 1.0


def test_no_layout_without_a_riff_header_or_before_the_data_chunk():
    raw = wav_bytes(100, 16_000, 1)
    assert wav_layout(b"ID3" + raw) is None and wav_layout(raw[: raw.index(b"data")]) is None
