"""Signal building blocks shared by the stimulus generators and their measurements: gates, levels, envelopes, onsets."""
from __future__ import annotations

import numpy as np

from acousticbench.core.audio import SAMPLE_RATE

SR = SAMPLE_RATE
RAMP_S = 0.01  # raised-cosine on/off ramps: no clicks that would add a broadband cue


def frames(seconds: float) -> int:
    return int(round(seconds * SR))


def rms(x: np.ndarray) -> float:
    """Root mean square over every sample of every channel."""
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


def db(value: float) -> float:
    return float(20.0 * np.log10(max(value, 1e-12)))


def gate(n: int, start: int, length: int, ramp: int = frames(RAMP_S)) -> np.ndarray:
    """0/1 envelope that is on for `length` samples from `start`, with raised-cosine ramps inside that span."""
    env = np.zeros(n)
    env[start : start + length] = 1.0
    ramp = min(ramp, length // 2)
    if ramp > 0:
        rise = 0.5 - 0.5 * np.cos(np.pi * (np.arange(ramp) + 0.5) / ramp)
        env[start : start + ramp] = rise
        env[start + length - ramp : start + length] = rise[::-1]
    return env


def roved_gate(rng: np.random.Generator, onset: tuple[float, float] = (0.04, 0.12), length: tuple[float, float] = (0.5, 0.62)) -> tuple[float, float]:
    """Roved onset and sound length (s), rounded to whole milliseconds, shared by the clips of a pair."""
    return round(float(rng.uniform(*onset)), 3), round(float(rng.uniform(*length)), 3)


def mono(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x.mean(axis=1) if x.ndim == 2 else x


def envelope_db(x: np.ndarray, window_s: float = 0.005) -> np.ndarray:
    """Short-time level in dB, a centred moving average of the power over `window_s`."""
    power = np.square(mono(x))
    w = max(1, frames(window_s))
    csum = np.concatenate(([0.0], np.cumsum(power)))
    half = w // 2
    hi = np.minimum(np.arange(power.size) + w - half, power.size)
    lo = np.maximum(np.arange(power.size) - half, 0)
    mean = (csum[hi] - csum[lo]) / (hi - lo)
    return 10.0 * np.log10(mean + 1e-20)


def sounding(x: np.ndarray, below_peak_db: float = 20.0, window_s: float = 0.005) -> tuple[int, int]:
    """First and last sample whose short-time level is within `below_peak_db` of the loudest moment."""
    env = envelope_db(x, window_s)
    above = np.flatnonzero(env >= env.max() - below_peak_db)
    return int(above[0]), int(above[-1])


def onsets(x: np.ndarray, on_db: float = 15.0, off_db: float = 30.0, window_s: float = 0.002) -> np.ndarray:
    """Onset times (s) of separate events: rises above peak-`on_db` after a fall below peak-`off_db` (hysteresis)."""
    env = envelope_db(x, window_s)
    above, below = env >= env.max() - on_db, env <= env.max() - off_db
    idx = np.flatnonzero(above | below)
    state = above[idx]
    previous = np.concatenate(([False], state[:-1]))  # before the first sample we count as "below": armed
    return idx[state & ~previous] / SR

