"""Cheap features an outside auditor reads off one clip without listening for the attribute: level, spectrum, timing, noise floor."""
# Everything is measured on 5 ms frames; a frame "sounds" when it is within SOUNDING_DB of the loudest frame, and
# runs of sounding frames, bridged over dips shorter than 25 ms, are the clip's events (scipy.ndimage). The spectrum
# is Welch's over the whole clip (welch below). A stereo clip gives one feature dict per channel, so the
# left-minus-right of a level feature is the interaural level difference and of onset_s the interaural time cue.

from __future__ import annotations

import numpy as np
from scipy import ndimage

FRAME_S = 0.005
SOUNDING_DB = 20.0  # the auditor's "sounding" threshold below the loudest frame
FLOOR_SHARE = 0.1  # the quietest tenth of the frames is taken as the noise floor
GAP_FRAMES = 5  # a dip shorter than 25 ms (a fluctuating tail) does not split an event
ROLLOFF = 0.85  # the spectral rolloff frequency holds this share of the power below it

LEVEL = ("peak_db", "rms_db", "sounding_rms_db", "event_mean_db", "event_max_db")
FEATURES = (
    *LEVEL,
    "crest_db",
    "centroid_hz",
    "rolloff_hz",
    "zcr_hz",
    "onset_s",
    "offset_s",
    "span_s",
    "floor_db",
    "floor_to_peak_db",
    "silent_fraction",
    "onset_count",
    "decay_db_per_s",
)
# Level features share a clip's level rove, so the difference of two of them cancels it (overall minus sounding level
# measures how much of the clip sounds): every such pair is a feature of its own. crest_db and floor_to_peak_db are two
# of them already.
ROVED = (*LEVEL, "floor_db")
PAIRS = tuple(f"{a}-{b}" for i, a in enumerate(ROVED) for b in ROVED[i + 1:]
              if {a, b} not in ({"peak_db", "rms_db"}, {"peak_db", "floor_db"}))


def db_power(power: np.ndarray | float) -> np.ndarray | float:
    return 10.0 * np.log10(np.maximum(power, 1e-20))


def frame_power(x: np.ndarray, sr: int) -> np.ndarray:
    """Mean power of consecutive FRAME_S frames (the last partial frame is dropped)."""
    hop = int(round(FRAME_S * sr))
    return np.mean(np.square(x[: x.size // hop * hop]).reshape(-1, hop), axis=1)


def bridged(sounding: np.ndarray) -> np.ndarray:
    """`sounding` with the dips between two sounding frames filled where they are shorter than GAP_FRAMES."""
    dips, _ = ndimage.label(~sounding)
    short = np.flatnonzero(np.bincount(dips.ravel())[1:] < GAP_FRAMES) + 1
    on = np.flatnonzero(sounding)
    inside = (np.arange(sounding.size) > on[0]) & (np.arange(sounding.size) < on[-1])
    return sounding | (np.isin(dips, short) & inside)


def level_features(x: np.ndarray, power: np.ndarray, sounding: np.ndarray) -> dict[str, float]:
    events, count = ndimage.label(bridged(sounding))
    event_db = db_power(ndimage.mean(power, events, np.arange(1, count + 1)))
    peak_db, rms_db = 20 * np.log10(max(np.abs(x).max(), 1e-10)), float(db_power(np.mean(np.square(x))))
    return {
        "peak_db": peak_db,
        "rms_db": rms_db,
        "sounding_rms_db": float(db_power(power[sounding].mean())),
        "event_mean_db": float(np.mean(event_db)),
        "event_max_db": float(np.max(event_db)),
        "crest_db": peak_db - rms_db,
        "onset_count": float(count),
    }


def welch(x: np.ndarray, sr: int, nperseg: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """Welch's power spectral density as scipy.signal.welch(x, fs=sr, nperseg=512) computes it (periodic Hann
    window, half overlap, each segment's mean removed, one-sided density; a clip shorter than a segment is one
    segment), to 1e-12 (tests/test_shortcut_audit.py), with the segments framed at once: scipy detrends and
    transforms them one by one, and the audit's spectra are most of its time."""
    n = min(nperseg, x.shape[-1])
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)
    frames = np.lib.stride_tricks.sliding_window_view(x, n)[:: n - n // 2]
    frames = frames - frames.mean(axis=1, keepdims=True)
    psd = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2 / (sr * np.sum(window**2))
    psd[:, 1 : (n + 1) // 2 if n % 2 else n // 2] *= 2  # one-sided: all but DC (and Nyquist) count twice
    return np.fft.rfftfreq(n, 1 / sr), psd.mean(axis=0)


def spectral_features(x: np.ndarray, sounding_samples: np.ndarray, sr: int) -> dict[str, float]:
    freqs, psd = welch(x, sr)
    cumulative = np.cumsum(psd) / np.sum(psd)
    sound = x[sounding_samples]
    crossings = np.count_nonzero(np.signbit(sound[1:]) != np.signbit(sound[:-1]))
    return {
        "centroid_hz": float(np.sum(freqs * psd) / np.sum(psd)),
        "rolloff_hz": float(freqs[np.searchsorted(cumulative, ROLLOFF)]),
        "zcr_hz": crossings * sr / max(sound.size - 1, 1),  # zero crossings per second while the clip sounds
    }


def decay_slope(level: np.ndarray, sounding: np.ndarray) -> float:
    """dB per second from the loudest frame to the last sounding one (least squares; 0 when under 3 frames)."""
    start, end = int(np.argmax(level)), int(np.flatnonzero(sounding)[-1])
    if end - start < 2:
        return 0.0
    t = np.arange(start, end + 1) * FRAME_S
    return float(np.polyfit(t, level[start : end + 1], 1)[0])


def timing_features(power: np.ndarray, sounding: np.ndarray, peak_db: float) -> dict[str, float]:
    on = np.flatnonzero(sounding)
    quietest = np.sort(power)[: max(1, int(power.size * FLOOR_SHARE))]
    floor_db = float(db_power(quietest.mean()))
    return {
        "onset_s": on[0] * FRAME_S,
        "offset_s": (on[-1] + 1) * FRAME_S,
        "span_s": (on[-1] + 1 - on[0]) * FRAME_S,
        "floor_db": floor_db,
        "floor_to_peak_db": peak_db - floor_db,
        "silent_fraction": 1.0 - on.size / sounding.size,
        "decay_db_per_s": decay_slope(db_power(power), sounding),
    }


def channel_features(x: np.ndarray, sr: int) -> dict[str, float]:
    """Every feature of FEATURES and PAIRS for one channel of float samples."""
    x = np.asarray(x, dtype=np.float64)
    power = frame_power(x, sr)
    level = db_power(power)
    sounding = level >= level.max() - SOUNDING_DB
    per_sample = np.zeros(x.size, dtype=bool)
    per_sample[: power.size * int(round(FRAME_S * sr))] = np.repeat(sounding, int(round(FRAME_S * sr)))
    features = level_features(x, power, sounding)
    features |= spectral_features(x, per_sample, sr)
    features |= timing_features(power, sounding, features["peak_db"])
    out = {name: float(features[name]) for name in FEATURES}
    return out | {pair: out[pair.split("-")[0]] - out[pair.split("-")[1]] for pair in PAIRS}


def clip_features(samples: np.ndarray, sr: int) -> list[dict[str, float]]:
    """One feature dict per channel of a (frames,) or (frames, channels) clip."""
    channels = samples[:, None] if samples.ndim == 1 else samples
    return [channel_features(channels[:, c], sr) for c in range(channels.shape[1])]
