"""Pitch pairs: harmonic tones under one spectral envelope fixed in Hz that differ only in f0 (12, 4, 1, 0.5, 0.2 semitones)."""
# The envelope (a formant-like bump) stays put while f0 moves, so the spectral centroid and the timing do
# not follow pitch. Roved per question: base f0 140-350 Hz, envelope centre and width, tone onset and
# length; per clip: phases, noise floor and level (stimuli/level.py).

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.level import finish
from acousticbench.benchmarks.acoustic.stimuli.signal import roved_gate, frames, gate, mono, sounding
from acousticbench.benchmarks.acoustic.stimuli.sources import render, roved_timbre
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "pitch"
UNIT = "semitones"
STEPS = (12.0, 4.0, 1.0, 0.5, 0.2)
CATCH_STEP = 12.0
CLIP_S = 0.8
F0_MIN, F0_MAX = 140.0, 350.0
SEARCH_HZ = (70.0, 600.0)  # covers the roved base f0 +- half the largest step
UPSAMPLE = 4


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    base = float(np.exp(rng.uniform(np.log(F0_MIN), np.log(F0_MAX))))
    timbre = roved_timbre(rng, tone_only=True)
    onset, length = roved_gate(rng)
    sign = 1.0 if answer == "A" else -1.0
    f0s = (base * 2 ** (sign * step / 24), base * 2 ** (-sign * step / 24))
    n = frames(CLIP_S)
    envelope = gate(n, frames(onset), frames(length))
    clips = tuple(finish(render({**timbre, "f0_hz": f0}, n, rng) * envelope, rng) for f0 in f0s)
    shared = {**{k: v for k, v in timbre.items() if k != "f0_hz"}, "base_f0_hz": round(base, 4), "onset_s": onset, "sound_s": length}
    return Trial(clips, tuple({"f0_hz": round(f0, 4)} for f0 in f0s), shared)


def measure(clip: np.ndarray, sr: int) -> float:
    """Fundamental frequency (Hz): the first strong peak of the normalised autocorrelation, refined by a parabola."""
    x = mono(clip)
    start, end = sounding(x)
    seg = x[start : end + 1] - x[start : end + 1].mean()
    lo, hi = int(sr / SEARCH_HZ[1]) * UPSAMPLE, int(sr / SEARCH_HZ[0]) * UPSAMPLE
    size = 1 << int(np.ceil(np.log2(2 * seg.size)))
    # zero-padding the power spectrum interpolates the autocorrelation: a narrow peak between two samples is not missed
    ac = np.fft.irfft(np.abs(np.fft.rfft(seg, size)) ** 2, size * UPSAMPLE)[: hi + 2]
    ac = ac / (seg.size - np.arange(hi + 2) / UPSAMPLE)  # unbiased: long lags are not penalised for their shorter overlap
    ac /= ac[0]
    r = ac[lo - 1 : hi + 2]
    peaks = np.flatnonzero((r[1:-1] > r[:-2]) & (r[1:-1] >= r[2:])) + 1
    if peaks.size == 0:
        return 0.0
    strong = peaks[r[peaks] >= 0.9 * r[peaks].max()]  # the shortest period among the near-best: no octave errors
    i = int(strong[0])
    a, b, c = r[i - 1], r[i], r[i + 1]
    lag = (lo - 1 + i + 0.5 * (a - c) / (a - 2 * b + c)) / UPSAMPLE
    return float(sr / lag)
