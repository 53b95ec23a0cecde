"""Audio I/O: read and write PCM16 WAV (soundfile), resample (soxr), merge clips with silence."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from acousticbench.core.clip_pins import read_checked
from acousticbench.core.errors import ArchiveError

SAMPLE_RATE = 16_000


def read_audio(path: str | Path, sr: int | None = None) -> tuple[np.ndarray, int]:
    """Float32 samples in [-1, 1], shape (frames,) for mono or (frames, channels); resampled to `sr` if given."""
    import soundfile as sf

    try:  # the bytes checked against the pack's pin are the ones decoded
        data, rate = sf.read(io.BytesIO(read_checked(str(path))), dtype="float32", always_2d=False)
    except FileNotFoundError:
        raise ArchiveError(f"missing audio file {path}: rebuild or re-extract the archive.") from None
    except (sf.LibsndfileError, RuntimeError) as err:
        raise ArchiveError(f"unreadable audio file {path} ({err}): rebuild or re-extract the archive.") from None
    if data.size == 0:  # an empty or truncated file: every measurement on it would be meaningless
        raise ArchiveError(f"audio file {path} has no samples (empty or truncated): rebuild or re-extract the archive.")
    if sr is not None and rate != sr:
        import soxr

        data = soxr.resample(data, rate, sr).astype(np.float32)
        rate = sr
    return data, rate


def to_pcm16(samples: np.ndarray) -> np.ndarray:
    """Clip to [-1, 1] and round to int16, the same on every machine."""
    return np.round(np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")


def pcm16_wav(pcm: np.ndarray, sr: int) -> bytes:
    """int16 samples, (frames,) or (frames, channels), as the bytes of a PCM16 WAV file."""
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, pcm, sr, subtype="PCM_16", format="WAV")
    return buf.getvalue()


def write_pcm16(path: str | Path, pcm: np.ndarray, sr: int) -> None:
    """Write int16 samples as a PCM16 WAV file. Encoded in memory, then written: libsndfile fsyncs every file it
    writes through a path, and a pack holds thousands."""
    Path(path).write_bytes(pcm16_wav(pcm, sr))


def write_wav(path: str | Path, samples: np.ndarray, sr: int = SAMPLE_RATE) -> None:
    """Write PCM16 WAV; `samples` is float in [-1, 1], (frames,) or (frames, channels)."""
    write_pcm16(path, to_pcm16(samples), sr)


def merge_clips(clips: list[np.ndarray], sr: int, gap_s: float = 1.0) -> np.ndarray:
    """Concatenate clips with `gap_s` seconds of silence between them (for single-audio models)."""
    if not clips:
        raise ValueError("merge_clips needs at least one clip")
    gap = np.zeros((int(round(gap_s * sr)),) + clips[0].shape[1:], dtype=np.float32)
    parts: list[np.ndarray] = []
    for i, clip in enumerate(clips):
        if i:
            parts.append(gap)
        parts.append(clip.astype(np.float32))
    return np.concatenate(parts)
