"""Sound sources the generators share: harmonic complexes, shaped noise and short percussive events, with roved timbre."""
from __future__ import annotations

from typing import Any

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.signal import SR, frames

TOP_HZ = 7000.0  # highest partial; keeps every component well below the 8 kHz Nyquist limit
BURST_RAMP_S = 0.005  # on/off ramps of a burst: no click, and short enough for a 20 ms burst
NOISE_PEAK = 3.0  # a noise burst is clipped at 3 sigma (0.3 % of its samples): its peak does not grow with its length


def spectral_bump(freqs: np.ndarray, centre_hz: float, width_oct: float) -> np.ndarray:
    """Amplitude of a Gaussian bump on a log-frequency axis: a formant-like spectral envelope fixed in Hz."""
    octaves = np.log2(np.maximum(freqs, 1.0) / centre_hz)
    return np.exp(-0.5 * (octaves / width_oct) ** 2)


def harmonic_complex(n: int, f0: float, amplitudes: np.ndarray, phases: np.ndarray) -> np.ndarray:
    """Sum of a_k sin(2 pi k f0 t + phase_k), k = 1..len(amplitudes), as Im(sum c_k z^k) by Horner's rule.

    One complex exponential and k multiply-adds instead of k sines, to float64 precision.
    """
    z = np.exp(2j * np.pi * f0 * np.arange(n) / SR)
    coefs = amplitudes * np.exp(1j * phases)
    acc = np.full(n, coefs[-1], dtype=np.complex128)
    for c in coefs[-2::-1]:
        acc *= z
        acc += c
    acc *= z
    return acc.imag


def harmonic_count(f0: float) -> int:
    return int(TOP_HZ // f0)


def shaped_noise(n: int, rng: np.random.Generator, centre_hz: float, width_oct: float) -> np.ndarray:
    """Gaussian noise filtered by `spectral_bump` in the frequency domain."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / SR)
    shaped = spectrum * spectral_bump(freqs, centre_hz, width_oct) * (freqs <= TOP_HZ)
    return np.fft.irfft(shaped, n)


def roved_timbre(rng: np.random.Generator, tone_only: bool = False) -> dict[str, Any]:
    """Nuisance parameters of a source, drawn once per question and shared by its clips."""
    kind = "tone" if tone_only or rng.random() < 0.5 else "noise"
    return {
        "source": kind,
        "f0_hz": round(float(np.exp(rng.uniform(np.log(110), np.log(330)))), 3) if kind == "tone" else None,
        "formant_hz": round(float(np.exp(rng.uniform(np.log(500), np.log(2000)))), 3),
        "formant_width_oct": round(float(rng.uniform(0.8, 1.6)), 3),
    }


def render(timbre: dict[str, Any], n: int, rng: np.random.Generator) -> np.ndarray:
    """A steady sound of `n` samples with the given timbre; phases or noise are fresh from `rng`."""
    if timbre["source"] == "noise":
        return shaped_noise(n, rng, timbre["formant_hz"], timbre["formant_width_oct"])
    f0 = timbre["f0_hz"]
    count = harmonic_count(f0)
    amps = spectral_bump(f0 * np.arange(1, count + 1), timbre["formant_hz"], timbre["formant_width_oct"])
    return harmonic_complex(n, f0, amps, rng.uniform(0, 2 * np.pi, count))


def roved_event(rng: np.random.Generator) -> dict[str, Any]:
    """Nuisance parameters of the short sounds of a train (a tone or a noise band), shared by the clips of a question."""
    return {
        "event": "tone" if rng.random() < 0.5 else "noise",
        "event_hz": round(float(np.exp(rng.uniform(np.log(300), np.log(2500)))), 3),
    }


def render_burst(params: dict[str, Any], n: int, rng: np.random.Generator, ramp_s: float = BURST_RAMP_S) -> np.ndarray:
    """One steady burst of `n` samples (a tone or a noise band at params' frequency, peaks clipped), RMS about 1 inside its
    raised-cosine ramps: how long it lasts is up to the caller, not fixed by a decay."""
    if params["event"] == "tone":
        carrier = np.sqrt(2) * np.sin(2 * np.pi * params["event_hz"] * np.arange(n) / SR + rng.uniform(0, 2 * np.pi))
    else:
        carrier = shaped_noise(n, rng, params["event_hz"], 1.0)
        carrier = np.clip(carrier / np.sqrt(np.mean(carrier**2)), -NOISE_PEAK, NOISE_PEAK)
    ramp = min(frames(ramp_s), n // 2)
    rise = 0.5 - 0.5 * np.cos(np.pi * (np.arange(ramp) + 0.5) / ramp)
    carrier[:ramp] *= rise
    carrier[n - ramp :] *= rise[::-1]
    return carrier
