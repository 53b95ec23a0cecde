"""Spoken digits one to nine in three voices, read from the FLAC files shipped in the package (no TTS at build time).

scripts/make_spoken_digits.py made them once with espeak-ng: a system TTS may speak differently on another machine,
and the open pack must be byte-identical everywhere.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import numpy as np

from acousticbench.core.errors import UserError

# (espeak-ng voice, words per minute, pitch 0-99): three speakers, so a digit is not always the very same sound
VOICES: tuple[tuple[str, int, int], ...] = (("en-us", 165, 45), ("en+f3", 170, 60), ("en-gb-x-rp+m3", 155, 35))
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
DIGITS = range(1, 10)  # AudioOperator(Hard) speaks only 1-9
FOLDER = Path(__file__).resolve().parent / "digits"
SOURCE = "SOURCE.json"  # how the files were made (espeak-ng version, voices, trimming)
PEAK = 0.5


def digit_path(d: int, voice: int) -> Path:
    return FOLDER / f"{d}_{voice}.flac"


@lru_cache(maxsize=None)
def digit(d: int, voice: int) -> np.ndarray:
    """The digit `d` spoken by VOICES[voice]: float64 at 16 kHz, silence trimmed, peak PEAK."""
    import soundfile as sf

    path = digit_path(d, voice)
    try:
        samples, _ = sf.read(str(path), dtype="int16")
    except (OSError, RuntimeError) as err:  # soundfile raises LibsndfileError (a RuntimeError) on a damaged file
        raise UserError(f"the spoken digit {path} is missing or unreadable ({err}): reinstall acousticbench.") from None
    return samples.astype(np.float64) * (PEAK / 32767.0)  # int16 -> float64: exact, the same everywhere


def all_digits() -> dict[tuple[int, int], np.ndarray]:
    """Every (digit 1-9, voice) utterance the pack uses: what the Oracle matches spoken digits against."""
    return {(d, v): digit(d, v) for d in DIGITS for v in range(len(VOICES))}


def digits_sha256() -> str:
    """One sha256 over every shipped digit file (name and bytes): names the digits a pack was built with."""
    h = hashlib.sha256()
    for d in DIGITS:
        for v in range(len(VOICES)):
            path = digit_path(d, v)
            h.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()
