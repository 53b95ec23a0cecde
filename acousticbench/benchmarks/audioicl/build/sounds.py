"""Synthetic sounds of the AudioICL pack: percussive one-shots, operator sound effects and background noise."""
from __future__ import annotations

from typing import Any

import numpy as np

from acousticbench.benchmarks.audioicl.build.plan import SR

PERCUSSIVE = ("wood", "metal", "drum", "click", "glass")
SFX = ("chirp", "buzz", "whoosh", "bell", "beeps", "ratchet")
_RATIOS = {"wood": (1.0, 2.57, 4.21), "metal": (1.0, 1.51, 2.76, 3.92), "drum": (1.0, 1.59), "click": (1.0,),
           "glass": (1.0, 2.32, 4.25, 6.63)}


def frames(seconds: float) -> int:
    return int(round(seconds * SR))


def roved_percussive(rng: np.random.Generator, family: str | None = None, max_decay_s: float = 0.12) -> dict[str, Any]:
    """A struck sound: inharmonic partials with exponential decays and a noise transient."""
    family = family or PERCUSSIVE[int(rng.integers(len(PERCUSSIVE)))]
    base = {"wood": (300, 900), "metal": (600, 1800), "drum": (70, 180), "click": (1500, 4000), "glass": (900, 2500)}[family]
    f0 = float(np.exp(rng.uniform(np.log(base[0]), np.log(base[1]))))
    ratios = _RATIOS[family]
    return {
        "family": family,
        "freqs": [round(f0 * r * float(rng.uniform(0.98, 1.02)), 2) for r in ratios if f0 * r < 7000],
        "amps": [round(float(rng.uniform(0.3, 1.0)) / (i + 1), 3) for i in range(len(ratios))],
        "decay_s": round(float(rng.uniform(0.35, 1.0)) * max_decay_s, 4),
        "noise_hz": round(float(np.exp(rng.uniform(np.log(1500), np.log(5000)))), 1),
        "noise_amp": round(float(rng.uniform(0.1, 0.6)) if family != "click" else 1.0, 3),
        "drop": round(float(rng.uniform(0.3, 0.8)), 3) if family == "drum" else 0.0,
    }


def percussive(params: dict[str, Any], seconds: float = 0.25) -> np.ndarray:
    """The waveform of a struck sound, peak 1; deterministic in `params` (its noise comes from a fixed seed)."""
    n = frames(seconds)
    t = np.arange(n) / SR
    decay = params["decay_s"]
    x = np.zeros(n)
    for i, (f, a) in enumerate(zip(params["freqs"], params["amps"])):
        bend = 1.0 + params["drop"] * np.exp(-t / 0.03)  # a drum's pitch falls just after the hit
        phase = 2 * np.pi * np.cumsum(f * bend) / SR
        x += a * np.sin(phase) * np.exp(-t * (1 + 0.5 * i) / decay)
    noise = band_noise(n, np.random.default_rng(int(params["noise_hz"] * 10)), params["noise_hz"], 1.0)
    x += params["noise_amp"] * noise / (np.abs(noise).max() + 1e-12) * np.exp(-t / 0.004)
    return _shaped(x)


def _shaped(x: np.ndarray) -> np.ndarray:
    """1 ms attack and a 10 ms fade, so every sound starts and ends cleanly; peak 1."""
    n = x.size
    x = x * np.minimum(1.0, (np.arange(n) + 0.5) / frames(0.001)) * np.minimum(1.0, (n - np.arange(n) - 0.5) / frames(0.01))
    return x / (np.abs(x).max() + 1e-12)


def band_noise(n: int, rng: np.random.Generator, centre_hz: float, width_oct: float) -> np.ndarray:
    """Gaussian noise with a Gaussian band on a log-frequency axis."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.maximum(np.fft.rfftfreq(n, 1 / SR), 1.0)
    return np.fft.irfft(spectrum * np.exp(-0.5 * (np.log2(freqs / centre_hz) / width_oct) ** 2), n)


def pink_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """Noise with power falling 3 dB per octave above 50 Hz, unit RMS."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.maximum(np.fft.rfftfreq(n, 1 / SR), 50.0)
    x = np.fft.irfft(spectrum / np.sqrt(freqs), n)
    return x / np.sqrt(np.mean(x**2))


def roved_sfx(rng: np.random.Generator, family: str) -> dict[str, Any]:
    """Parameters of an operator sound effect of one family, 0.25-0.35 s long."""
    lo, hi = sorted(float(v) for v in np.exp(rng.uniform(np.log(300), np.log(3000), 2)))
    return {"family": family, "seconds": round(float(rng.uniform(0.25, 0.35)), 3), "lo_hz": round(lo, 1),
            "hi_hz": round(max(hi, lo * 1.6), 1), "rate_hz": round(float(rng.uniform(12, 35)), 2),
            "up": bool(rng.random() < 0.5), "noise_seed": int(rng.integers(2**31))}


def sfx(params: dict[str, Any]) -> np.ndarray:
    """The waveform of an operator sound effect, peak 1; the same parameters give the same samples."""
    n = frames(params["seconds"])
    t = np.arange(n) / SR
    lo, hi, fam = params["lo_hz"], params["hi_hz"], params["family"]
    rng = np.random.default_rng(params["noise_seed"])
    if fam == "chirp":
        f = lo * (hi / lo) ** (t / t[-1]) if params["up"] else hi * (lo / hi) ** (t / t[-1])
        x = np.sin(2 * np.pi * np.cumsum(f) / SR)
    elif fam == "buzz":
        f0 = lo / 4
        x = sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, int(6000 // f0)))
        x *= 0.6 + 0.4 * np.sign(np.sin(2 * np.pi * params["rate_hz"] * t))
    elif fam == "whoosh":
        x = band_noise(n, rng, np.sqrt(lo * hi), 0.6) * np.sin(np.pi * t / t[-1]) ** 2
    elif fam == "bell":
        x = sum(np.sin(2 * np.pi * lo * r * t) * np.exp(-t * r / 0.15) for r in (1.0, 2.76, 5.4))
    elif fam == "beeps":
        half = t < t[-1] / 2
        x = np.where(half, np.sin(2 * np.pi * lo * t), np.sin(2 * np.pi * hi * t)) * (np.abs(t - t[-1] / 2) > 0.03)
    else:  # ratchet: a train of clicks
        x = np.zeros(n)
        period = frames(1 / params["rate_hz"])
        click = band_noise(frames(0.006), rng, hi, 0.7)
        for start in range(0, n - click.size, period):
            x[start : start + click.size] += click
    return _shaped(np.asarray(x, dtype=np.float64))
