"""Spoken digits one to nine from espeak-ng (deterministic for a given espeak-ng version), trimmed, at 16 kHz."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache

import numpy as np

from acousticbench.audioicl.build.plan import SR
from acousticbench.errors import UserError

# (voice, words per minute, pitch 0-99): three speakers, so a digit is not always the very same sound
VOICES: tuple[tuple[str, int, int], ...] = (("en-us", 165, 45), ("en+f3", 170, 60), ("en-gb-x-rp+m3", 155, 35))
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
INSTALL = "apt-get install -y espeak-ng (scripts/setup_env.sh installs it when run as root)"


def espeak() -> str:
    path = shutil.which("espeak-ng")
    if path is None:
        raise UserError(f"espeak-ng is needed for the spoken digits of AudioOperator: {INSTALL}.")
    return path


def espeak_version() -> str:
    """'1.51': goes into the pack's manifest, since another espeak-ng version may speak the digits differently."""
    out = subprocess.run([espeak(), "--version"], capture_output=True, text=True, check=False)
    found = re.search(r"\d+\.\d+(?:\.\d+)?", out.stdout)
    return found.group(0) if found else "unknown"


@lru_cache(maxsize=None)
def digit(d: int, voice: int) -> np.ndarray:
    """The digit `d` spoken by VOICES[voice]: float64, leading and trailing silence trimmed, peak 0.5."""
    import soundfile as sf
    import soxr

    name, wpm, pitch = VOICES[voice]
    fd, path = tempfile.mkstemp(suffix=".wav")
    os.close(fd)
    try:
        subprocess.run([espeak(), "-v", name, "-s", str(wpm), "-p", str(pitch), "-w", path, WORDS[d]],
                       check=True, capture_output=True, timeout=30)
        samples, rate = sf.read(path, dtype="float64")
    finally:
        os.unlink(path)
    samples = soxr.resample(samples, rate, SR) if rate != SR else samples
    return trimmed(np.asarray(samples, dtype=np.float64)) * 0.5


def trimmed(x: np.ndarray, below_peak_db: float = 40.0, pad_s: float = 0.01) -> np.ndarray:
    """Cut the silence before and after the loudest part, keeping `pad_s`; fade the cut edges; peak 1."""
    level = np.abs(x)
    above = np.flatnonzero(level >= level.max() * 10 ** (-below_peak_db / 20))
    pad = int(pad_s * SR)
    y = x[max(0, above[0] - pad) : above[-1] + pad + 1].copy()
    ramp = min(int(0.005 * SR), y.size // 2)
    y[:ramp] *= np.linspace(0, 1, ramp)
    y[y.size - ramp :] *= np.linspace(1, 0, ramp)
    return y / np.abs(y).max()


def all_digits() -> dict[tuple[int, int], np.ndarray]:
    """Every (digit 1-9, voice) utterance the pack uses: what the Oracle matches spoken digits against."""
    return {(d, v): digit(d, v) for d in range(1, 10) for v in range(len(VOICES))}
