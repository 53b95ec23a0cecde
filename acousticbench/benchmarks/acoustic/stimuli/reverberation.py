"""Reverberation pairs: one dry sound in two synthetic rooms whose RT60 differs (200, 80, 40, 20, 10 %; 5-10 % is the human limen)."""
# Each room is a direct impulse plus an exponentially decaying Gaussian tail (a fresh draw per clip). The
# tail starts at the same level in both rooms, as in two rooms of one size with different absorption, so
# the longer decay also holds more reverberant energy. The dry sound, its onset and the file length are the
# same in both clips. Roved per question: source and timbre, burst length, onset, mean RT60 (0.25-0.5 s) and
# the direct-to-reverberant ratio at that RT60 (-3 to +3 dB); per clip: the level (stimuli/level.py).

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.level import SPARSE_MID_DB, finish
from acousticbench.benchmarks.acoustic.stimuli.signal import SR, frames, gate, mono, roved_gate
from acousticbench.benchmarks.acoustic.stimuli.sources import render, roved_timbre
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "reverberation"
UNIT = "percent"
STEPS = (200.0, 80.0, 40.0, 20.0, 10.0)
CATCH_STEP = 200.0
CLIP_S = 1.2
RT60_S = (0.25, 0.5)
DECAY_60DB = np.log(1000.0)  # amplitude factor exp(-6.91 t / RT60) is -60 dB at t = RT60
FIT_DB = (-5.0, -35.0)  # the stretch of the energy decay curve the RT60 is fitted on (a T30 estimate)


def room(rng: np.random.Generator, n: int, rt60: float, tail_gain: float) -> np.ndarray:
    """Impulse response: a unit direct path, then from 1 ms a decaying noise tail."""
    t = np.arange(n) / SR
    h = tail_gain * rng.standard_normal(n) * np.exp(-DECAY_60DB * t / rt60)
    h[: frames(0.001)] = 0.0
    h[0] = 1.0
    return h


def convolved(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    size = x.size + h.size  # long enough that nothing wraps around; 2 * 19200 factors well for the FFT
    return np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(h, size), size)[: x.size]


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    timbre = roved_timbre(rng)
    onset, length = roved_gate(rng, onset=(0.03, 0.06), length=(0.08, 0.15))
    base = float(rng.uniform(*RT60_S))
    drr_db = round(float(rng.uniform(-3.0, 3.0)), 3)
    tail_gain = np.sqrt(2 * DECAY_60DB / (SR * base * 10 ** (drr_db / 10)))  # tail energy = 1 / DRR at the base RT60
    ratio = (1 + step / 100) ** 0.5
    rt60s = (base * ratio, base / ratio) if answer == "A" else (base / ratio, base * ratio)
    n = frames(CLIP_S)
    dry = render(timbre, n, rng) * gate(n, frames(onset), frames(length))
    clips = tuple(finish(convolved(dry, room(rng, n, rt60, tail_gain)), rng, SPARSE_MID_DB) for rt60 in rt60s)
    shared = {**timbre, "base_rt60_s": round(base, 6), "drr_db_at_base": drr_db, "onset_s": onset, "sound_s": length}
    return Trial(clips, tuple({"rt60_s": round(rt60, 6)} for rt60 in rt60s), shared)


def measure(clip: np.ndarray, sr: int) -> float:
    """Decay time (s): RT60 from the slope of the Schroeder energy decay curve after the loudest moment, noise floor removed."""
    power = np.square(mono(clip))
    hop = frames(0.005)
    blocks = power[: power.size // hop * hop].reshape(-1, hop).sum(axis=1)
    floor = blocks[-blocks.size // 10 :].mean()  # the last 10 %: every tail has decayed by 55 dB or more, only background
    start = int(np.argmax(blocks))
    decay = np.maximum(blocks[start:] - floor, 0.0)
    edc = np.cumsum(decay[::-1])[::-1]
    edc_db = 10 * np.log10(edc / edc[0] + 1e-30)
    fit = np.flatnonzero((edc_db <= FIT_DB[0]) & (edc_db >= FIT_DB[1]))
    if fit.size < 3:
        return 0.0
    slope = np.polyfit(fit * hop / sr, edc_db[fit], 1)[0]
    return float(-60.0 / slope)
