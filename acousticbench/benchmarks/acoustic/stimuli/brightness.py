"""Brightness pairs: one harmonic tone with two spectral tilts (spectral centroid 100, 40, 15, 7, 3 % higher; ~5 % is the human limen)."""
# The tilt (dB per octave) is solved so that the power-weighted spectral centroid hits its target exactly;
# f0, onset and length are the same in both clips. Roved per question: f0 (120-250 Hz), the mean centroid
# (700-1400 Hz), onset and length; per clip: phases, noise and level (stimuli/level.py).

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.level import finish
from acousticbench.benchmarks.acoustic.stimuli.signal import frames, gate, mono, roved_gate
from acousticbench.benchmarks.acoustic.stimuli.sources import harmonic_complex, harmonic_count
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "brightness"
UNIT = "percent"
STEPS = (100.0, 40.0, 15.0, 7.0, 3.0)
CATCH_STEP = 100.0
CLIP_S = 0.8
F0_HZ = (120.0, 250.0)
CENTROID_HZ = (700.0, 1400.0)
DB_PER_OCTAVE = 20 * np.log10(2)


def tilted(f0: float, tilt_db_per_octave: float) -> np.ndarray:
    """Harmonic amplitudes falling by `tilt` dB per octave above f0."""
    k = np.arange(1, harmonic_count(f0) + 1)
    return k ** (-tilt_db_per_octave / DB_PER_OCTAVE)


def centroid_of(f0: float, amplitudes: np.ndarray) -> float:
    power = amplitudes**2
    return float(np.sum(f0 * np.arange(1, power.size + 1) * power) / np.sum(power))


def tilt_for(f0: float, centroid_hz: float) -> float:
    """The tilt whose power-weighted centroid is `centroid_hz` (bisection; the centroid falls as the tilt grows)."""
    lo, hi = -12.0, 80.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if centroid_of(f0, tilted(f0, mid)) > centroid_hz else (lo, mid)
    return 0.5 * (lo + hi)


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    f0 = float(np.exp(rng.uniform(np.log(F0_HZ[0]), np.log(F0_HZ[1]))))
    base = float(np.exp(rng.uniform(np.log(CENTROID_HZ[0]), np.log(CENTROID_HZ[1]))))
    onset, length = roved_gate(rng)
    ratio = (1 + step / 100) ** 0.5
    targets = (base * ratio, base / ratio) if answer == "A" else (base / ratio, base * ratio)
    n = frames(CLIP_S)
    envelope = gate(n, frames(onset), frames(length))
    clips, clip_params = [], []
    for target in targets:
        tilt = tilt_for(f0, target)
        amplitudes = tilted(f0, tilt)
        clips.append(finish(harmonic_complex(n, f0, amplitudes, rng.uniform(0, 2 * np.pi, amplitudes.size)) * envelope, rng))
        clip_params.append({"centroid_hz": round(centroid_of(f0, amplitudes), 4), "tilt_db_per_octave": round(tilt, 4)})
    shared = {"f0_hz": round(f0, 4), "base_centroid_hz": round(base, 4), "onset_s": onset, "sound_s": length}
    return Trial(tuple(clips), tuple(clip_params), shared)


def measure(clip: np.ndarray, sr: int) -> float:
    """Spectral centroid (Hz), power-weighted over the spectrum of the whole clip."""
    power = np.abs(np.fft.rfft(mono(clip))) ** 2
    freqs = np.fft.rfftfreq(mono(clip).size, 1 / sr)
    return float(np.sum(freqs * power) / np.sum(power))
