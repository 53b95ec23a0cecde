"""The learned audit's generic spectral features of one channel: long-term shape, octave bands, spectral contrast, MFCC
statistics and periodicity, each named "family.feature" (shortcuts/generic_time.py has the rest)."""
# An outside auditor's kit, not the attribute's measure: nothing here knows which task it reads. The spectral features
# read 32 ms frames (a 10 ms hop) within SOUNDING_DB of the loudest, so a roved silence or noise floor does not dilute
# them.

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import fft

from acousticbench.benchmarks.acoustic.shortcuts.features import FLOOR_SHARE, FRAME_S, SOUNDING_DB, db_power

N_FFT, HOP_S = 512, 0.01
N_MELS, N_MFCC = 40, 13
OCTAVES = (0.0, 200.0, 400.0, 800.0, 1600.0, 3200.0, 8000.0)  # band and contrast edges (Hz)
CONTRAST_SHARE = 0.2  # a band's peak and valley: the mean of its loudest and quietest fifth of bins
PITCH_HZ = (50.0, 500.0)  # where the periodicity search looks


@lru_cache(maxsize=4)
def mel_filters(sr: int) -> np.ndarray:
    """Triangular mel filters (N_MELS x bins) from 0 Hz to Nyquist."""
    mel = np.linspace(0.0, 2595 * np.log10(1 + sr / 2 / 700), N_MELS + 2)
    edges = 700 * (10 ** (mel / 2595) - 1)
    freqs = np.fft.rfftfreq(N_FFT, 1 / sr)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    return np.maximum(0.0, np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)))


def stft_power(x: np.ndarray, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """(frame power spectra, frequencies): Hann frames of N_FFT samples every HOP_S; a short clip is zero-padded."""
    x = np.pad(x, (0, max(0, N_FFT - x.size)))
    frames = np.lib.stride_tricks.sliding_window_view(x, N_FFT)[:: int(round(HOP_S * sr))]
    return np.abs(np.fft.rfft(frames * np.hanning(N_FFT), axis=1)) ** 2, np.fft.rfftfreq(N_FFT, 1 / sr)


def shape(psd: np.ndarray, freqs: np.ndarray, prefix: str) -> dict[str, float]:
    """Centroid, spread, skewness, kurtosis, flatness, slope, rolloffs, peak and entropy of one power spectrum."""
    p = psd / (psd.sum() + 1e-30)
    centroid = float(np.sum(freqs * p))
    sd = float(np.sqrt(np.sum((freqs - centroid) ** 2 * p))) + 1e-9
    cumulative = np.cumsum(p)
    band = (freqs >= 100) & (freqs <= 7000)
    return {
        f"{prefix}.centroid_hz": centroid, f"{prefix}.spread_hz": sd,
        f"{prefix}.skew": float(np.sum(((freqs - centroid) / sd) ** 3 * p)),
        f"{prefix}.kurtosis": float(np.sum(((freqs - centroid) / sd) ** 4 * p)),
        f"{prefix}.flatness": float(np.exp(np.mean(np.log(psd + 1e-30))) / (np.mean(psd) + 1e-30)),
        f"{prefix}.slope_db_per_octave": float(np.polyfit(np.log2(freqs[band]), db_power(psd[band]), 1)[0]),
        **{f"{prefix}.rolloff{int(q * 100)}_hz": float(freqs[min(np.searchsorted(cumulative, q), freqs.size - 1)])
           for q in (0.5, 0.85, 0.95)},
        f"{prefix}.peak_hz": float(freqs[np.argmax(psd)]),
        f"{prefix}.entropy": float(-np.sum(p * np.log2(p + 1e-30)) / np.log2(p.size)),
    }


def spectral(x: np.ndarray, sr: int) -> dict[str, float]:
    """Long-term spectral shape, its change over time, octave band shares, spectral contrast and MFCC statistics."""
    power, freqs = stft_power(x, sr)
    energy = db_power(power.sum(axis=1))
    frames = power[energy >= energy.max() - SOUNDING_DB]
    psd = frames.mean(axis=0)
    per_frame = np.sum(frames * freqs, axis=1) / (frames.sum(axis=1) + 1e-30)
    norm = frames / (frames.sum(axis=1, keepdims=True) + 1e-30)
    flux = np.sqrt(np.sum(np.diff(norm, axis=0) ** 2, axis=1)) if len(frames) > 1 else np.zeros(1)
    quiet = power[energy <= np.percentile(energy, 100 * FLOOR_SHARE)].mean(axis=0)
    out = shape(psd, freqs, "spec") | {"spec.centroid_std_hz": float(per_frame.std()),
                                         "spec.flux_mean": float(flux.mean()), "spec.flux_std": float(flux.std()),
                                         "floor.centroid_hz": float(np.sum(freqs * quiet) / (quiet.sum() + 1e-30))}
    for k, (lo, hi) in enumerate(zip(OCTAVES[:-1], OCTAVES[1:])):
        inside = (freqs >= lo) & (freqs < hi)
        out[f"band.{k}_db"] = float(db_power(psd[inside].sum() / (psd.sum() + 1e-30)))
        ranked = np.sort(db_power(frames[:, inside]), axis=1)
        take = max(1, int(round(CONTRAST_SHARE * ranked.shape[1])))
        out[f"contrast.{k}_db"] = float(np.mean(ranked[:, -take:].mean(axis=1) - ranked[:, :take].mean(axis=1)))
    mfcc = fft.dct(np.log(frames @ mel_filters(sr).T + 1e-12), type=2, norm="ortho", axis=1)[:, :N_MFCC]
    out |= {f"mfcc.mean_{k}": float(v) for k, v in enumerate(mfcc.mean(axis=0))}
    return out | {f"mfcc.std_{k}": float(v) for k, v in enumerate(mfcc.std(axis=0))}


def periodicity(x: np.ndarray, sounding: np.ndarray, sr: int) -> dict[str, float]:
    """The strongest normalised autocorrelation of the sounding samples between PITCH_HZ, its lag as a frequency, and
    the zero-crossing rate."""
    hop = int(round(FRAME_S * sr))
    sound = x[: sounding.size * hop][np.repeat(sounding, hop)]
    sound = sound - sound.mean()
    auto = np.fft.irfft(np.abs(np.fft.rfft(sound, 2 * sound.size)) ** 2)[: sound.size]
    lo, hi = int(sr / PITCH_HZ[1]), min(int(sr / PITCH_HZ[0]), sound.size - 1)
    lag = lo + int(np.argmax(auto[lo:hi])) if hi > lo else lo
    crossings = np.count_nonzero(np.signbit(sound[1:]) != np.signbit(sound[:-1]))
    return {"harm.strength": float(auto[lag] / auto[0]) if hi > lo and auto[0] > 0 else 0.0, "harm.f0_hz": sr / lag,
            "harm.zcr_hz": crossings * sr / max(sound.size - 1, 1)}
