"""The learned audit's generic time-domain features of one channel: level, envelope, modulation, timing, events, noise
floor and decay, each named "family.feature" (shortcuts/generic_spectrum.py has the spectral ones)."""
# Everything reads the level of 5 ms frames; a frame sounds within SOUNDING_DB of the loudest, and runs of sounding
# frames bridged over dips under 25 ms are the events, as in shortcuts/features.py. The envelope and modulation
# statistics cover the sounding span only, so a roved silence around it does not move them.

from __future__ import annotations

import numpy as np
from scipy import ndimage

from acousticbench.benchmarks.acoustic.shortcuts.features import FLOOR_SHARE, FRAME_S, SOUNDING_DB, bridged, db_power

MOD_BANDS = ((1.0, 4.0), (4.0, 8.0), (8.0, 16.0), (16.0, 32.0))  # envelope modulation bands (Hz)
MIN_LAG_S = 0.05  # the envelope's self-similarity is searched from this lag on
ATTACK_DB = 3.0  # the attack ends, and the release starts, within this many dB of an event's loudest frame
EARLY_S = 0.05  # the decay's early part: this long after the last event's loudest frame


def envelope(level: np.ndarray, on: np.ndarray) -> dict[str, float]:
    """Level statistics over the sounding span (first to last sounding frame), relative to the loudest frame."""
    span = level[on[0] : on[-1] + 1] - level.max()
    amp = 10 ** (span / 20)
    centred = amp - amp.mean()
    auto = np.correlate(centred, centred, "full")[centred.size - 1 :]
    first = int(MIN_LAG_S / FRAME_S)
    peak = first + int(np.argmax(auto[first:])) if auto.size > first else 0
    z = centred / amp.std() if amp.std() > 0 else np.zeros_like(amp)
    return {
        "env.mean_db": float(span.mean()), "env.std_db": float(span.std()),
        **{f"env.p{q}_db": float(np.percentile(span, q)) for q in (10, 50, 90)},
        "env.skew": float(np.mean(z**3)), "env.kurtosis": float(np.mean(z**4)),
        "env.flux_db": float(np.mean(np.abs(np.diff(span)))) if span.size > 1 else 0.0,
        "env.variability": float(amp.std() / amp.mean()),
        "env.autocorr_peak": float(auto[peak] / auto[0]) if peak and auto[0] > 0 else 0.0,
        "env.autocorr_lag_s": peak * FRAME_S,
    }


def modulation(level: np.ndarray, on: np.ndarray) -> dict[str, float]:
    """How the amplitude envelope's fluctuation power over the sounding span splits over MOD_BANDS, and its peak."""
    amp = 10 ** ((level[on[0] : on[-1] + 1] - level.max()) / 20)
    n = max(amp.size, int(2.0 / FRAME_S))  # zero-padded to 2 s at least: one frequency grid for every clip
    power = np.abs(np.fft.rfft(amp - amp.mean(), n)) ** 2
    freqs = np.fft.rfftfreq(n, FRAME_S)
    inside = (freqs >= MOD_BANDS[0][0]) & (freqs < MOD_BANDS[-1][1])
    total = power[inside].sum() + 1e-30
    out = {f"mod.share_{lo:g}_{hi:g}_hz": float(power[(freqs >= lo) & (freqs < hi)].sum() / total) for lo, hi in MOD_BANDS}
    return out | {"mod.peak_hz": float(freqs[inside][np.argmax(power[inside])])}


def events(power: np.ndarray, level: np.ndarray, sounding: np.ndarray) -> dict[str, float]:
    """Timing of the sounding span and statistics of its events: count, rate, lengths, gaps, intervals, levels."""
    labels, count = ndimage.label(bridged(sounding))
    runs = ndimage.find_objects(labels)
    starts = np.array([r[0].start for r in runs]) * FRAME_S
    lengths = np.array([r[0].stop - r[0].start for r in runs]) * FRAME_S
    gaps = starts[1:] - (starts[:-1] + lengths[:-1])
    ioi = np.diff(starts)
    event_db = db_power(ndimage.mean(power, labels, np.arange(1, count + 1)))
    first, last = runs[0][0], runs[-1][0]
    onset, offset = first.start * FRAME_S, last.stop * FRAME_S
    attack = np.flatnonzero(level[first] >= level[first].max() - ATTACK_DB)[0] * FRAME_S
    release = (last.stop - last.start - np.flatnonzero(level[last] >= level[last].max() - ATTACK_DB)[-1]) * FRAME_S
    t = (np.arange(power.size) + 0.5) * FRAME_S
    centre = float(np.sum(t * power) / np.sum(power))
    return {
        "timing.onset_s": onset, "timing.offset_s": offset, "timing.span_s": offset - onset,
        "timing.attack_s": attack, "timing.release_s": release, "timing.centre": (centre - onset) / (offset - onset),
        "event.count": float(count), "event.rate_hz": count / (offset - onset),
        "event.sounding_s": float(lengths.sum()), "event.duty": float(lengths.sum() / (offset - onset)),
        "event.length_mean_s": float(lengths.mean()), "event.length_std_s": float(lengths.std()),
        "event.length_min_s": float(lengths.min()), "event.length_max_s": float(lengths.max()),
        "event.gap_mean_s": float(gaps.mean()) if gaps.size else 0.0, "event.gap_std_s": float(gaps.std()) if gaps.size else 0.0,
        "event.ioi_mean_s": float(ioi.mean()) if ioi.size else 0.0,
        "event.ioi_cv": float(ioi.std() / ioi.mean()) if ioi.size else 0.0,
        "event.level_std_db": float(event_db.std()), "event.peak_minus_mean_db": float(event_db.max() - event_db.mean()),
    }


def decay(power: np.ndarray, level: np.ndarray, sounding: np.ndarray) -> dict[str, float]:
    """How the sound dies away: the slope after the loudest frame and, after the last event's loudest frame, the
    Schroeder (backward-integrated) decay's EDT and T20 and the energy after EARLY_S over the energy before it."""
    labels, count = ndimage.label(bridged(sounding))
    last = ndimage.find_objects(labels)[-1][0]
    peak = last.start + int(np.argmax(level[last]))
    end = int(np.flatnonzero(sounding)[-1])
    loudest = int(np.argmax(level))
    slope = float(np.polyfit(np.arange(loudest, end + 1) * FRAME_S, level[loudest : end + 1], 1)[0]) if end - loudest >= 2 else 0.0
    floor = np.sort(power)[: max(1, int(power.size * FLOOR_SHARE))].mean()
    tail = np.maximum(power[peak:] - floor, 0.0)
    curve = db_power(np.cumsum(tail[::-1])[::-1] / (tail.sum() + 1e-30))
    t = np.arange(curve.size) * FRAME_S
    edt = 6.0 * t[min(np.searchsorted(-curve, 10.0), curve.size - 1)]
    fit = (curve <= -5.0) & (curve >= -25.0)
    t20 = -60.0 / np.polyfit(t[fit], curve[fit], 1)[0] if fit.sum() >= 3 else t[-1]
    early = int(EARLY_S / FRAME_S)
    return {"decay.slope_db_per_s": slope, "decay.edt_s": float(edt), "decay.t20_s": float(t20),
            "decay.late_db": float(db_power(tail[early:].sum()) - db_power(tail[:early].sum()))}


def time_features(x: np.ndarray, power: np.ndarray) -> dict[str, float]:
    """Every time-domain feature of one channel, from its samples and its 5 ms frame powers."""
    level = db_power(power)
    sounding = level >= level.max() - SOUNDING_DB
    on = np.flatnonzero(sounding)
    peak_db, rms_db = 20 * np.log10(max(np.abs(x).max(), 1e-10)), float(db_power(np.mean(np.square(x))))
    floor_db = float(db_power(np.sort(power)[: max(1, int(power.size * FLOOR_SHARE))].mean()))
    return {
        "level.rms_db": rms_db, "level.peak_db": peak_db, "level.crest_db": peak_db - rms_db,
        "level.sounding_db": float(db_power(power[sounding].mean())), "level.max_frame_db": float(level.max()),
        "floor.db": floor_db, "floor.below_peak_db": float(level.max()) - floor_db,
        **envelope(level, on), **modulation(level, on), **events(power, level, sounding), **decay(power, level, sounding),
    }
