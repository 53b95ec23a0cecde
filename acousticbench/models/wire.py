"""Audio as it goes on the wire: WAV bytes per clip, merged into one for single-audio models."""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from acousticbench.core.clip_pins import read_checked
from acousticbench.core.errors import ArchiveError
from acousticbench.models.limits import MERGE_GAP_S

if TYPE_CHECKING:  # numpy is needed only to merge or re-encode clips: a plain WAV goes out as it is
    import numpy as np


def _is_pcm_wav(data: bytes) -> bool:
    return data[:4] == b"RIFF" and data[8:12] == b"WAVE"


def _encode_wav(samples: "np.ndarray", sr: int) -> bytes:
    from acousticbench.core.audio import pcm16_wav, to_pcm16

    return pcm16_wav(to_pcm16(samples), sr)


@lru_cache(maxsize=64)  # bounded: a 3,800-question run must not hold every clip; twins and repeats hit it
def wav_bytes(path: str) -> bytes:
    """The clip as WAV bytes: the file itself when it already is a WAV (no decode), else re-encoded as PCM16."""
    try:
        data = read_checked(path)  # the bytes sent are the ones the pack pins, or the question is an error record
    except FileNotFoundError:
        raise ArchiveError(f"missing audio file {path}: rebuild or re-extract the archive.") from None
    if _is_pcm_wav(data):
        return data
    from acousticbench.core.audio import read_audio

    samples, sr = read_audio(path)
    return _encode_wav(samples, sr)


def merged_wav(paths: list[str], gap_s: float = MERGE_GAP_S) -> bytes:
    """All clips in one WAV, `gap_s` seconds of silence between them, at the first clip's rate (mono if mixed)."""
    from acousticbench.core.audio import merge_clips, read_audio

    first, sr = read_audio(paths[0])
    clips = [first] + [read_audio(p, sr=sr)[0] for p in paths[1:]]
    if len({c.ndim for c in clips}) > 1 or len({c.shape[1:] for c in clips}) > 1:
        clips = [c.mean(axis=1) if c.ndim == 2 else c for c in clips]  # mixed mono/stereo: fold to mono
    return _encode_wav(merge_clips(clips, sr, gap_s), sr)


def prompt_clips(paths: list[str], merge_over: int | None) -> tuple[list[bytes], list[str]]:
    """The WAV bytes to send for a prompt's clips, merged into one when there are more than `merge_over` (the model's
    limit; None: never), and a note when they were."""
    if merge_over is not None and len(paths) > merge_over:
        note = (f"{len(paths)} clips merged into one with {MERGE_GAP_S:g} s of silence between them "
                f"(the model takes at most {merge_over} audio input{'s' if merge_over != 1 else ''})")
        return [merged_wav(paths)], [note]
    return [wav_bytes(p) for p in paths], []
