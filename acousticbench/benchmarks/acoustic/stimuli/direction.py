"""Direction trials: one stereo clip lateralised by a spherical-head ITD and a broadband ILD (60, 20, 8, 4, 2 degrees; ~2 is the human limen)."""
# A source at azimuth theta (positive = left) gets ITD = r/c (theta + sin theta) and ILD = 10 dB sin theta.
# The gains keep gL^2 + gR^2 constant and "right" is the exact channel mirror of "left", so the power over
# both channels cannot tell the sides apart; the background noise is the same in both ears (diotic), so a
# centred source has no interaural difference at all. Roved per question: source, timbre, onset, length, level.

from __future__ import annotations

from typing import Any

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.level import finish
from acousticbench.benchmarks.acoustic.stimuli.signal import SR, frames, gate, roved_gate
from acousticbench.benchmarks.acoustic.stimuli.sources import render, roved_timbre
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "direction"
UNIT = "degrees azimuth"
STEPS = (60.0, 20.0, 8.0, 4.0, 2.0)
CATCH_STEP = 90.0
CLIP_S = 0.8
HEAD_RADIUS_M, SPEED_OF_SOUND = 0.0875, 343.0
ILD_MAX_DB = 10.0
ITD_MAX_S = HEAD_RADIUS_M / SPEED_OF_SOUND * (np.pi / 2 + 1)
SIGNED = ("azimuth_deg", "itd_us", "ild_db")  # positive = left; mirroring a clip negates them


def cues(azimuth_deg: float) -> tuple[float, float]:
    """ITD (s, positive: the left ear leads) and ILD (dB, positive: louder on the left) of a source at that azimuth."""
    theta = np.radians(azimuth_deg)
    return float(HEAD_RADIUS_M / SPEED_OF_SOUND * (theta + np.sin(theta))), float(ILD_MAX_DB * np.sin(theta))


def delayed(x: np.ndarray, seconds: float) -> np.ndarray:
    """`x` delayed by a fractional number of samples (a linear phase shift; `x` is silent near both ends)."""
    size = 2 * x.size
    freqs = np.fft.rfftfreq(size, 1 / SR)
    return np.fft.irfft(np.fft.rfft(x, size) * np.exp(-2j * np.pi * freqs * seconds), size)[: x.size]


def lateralised(x: np.ndarray, azimuth_deg: float) -> np.ndarray:
    """Stereo (frames, 2) version of mono `x` from `azimuth_deg`; the delays and gains are split evenly between the ears."""
    itd, ild = cues(azimuth_deg)
    gain_left, gain_right = 10 ** (ild / 40), 10 ** (-ild / 40)
    scale = np.sqrt(2 / (gain_left**2 + gain_right**2))
    return np.stack([scale * gain_left * delayed(x, -itd / 2), scale * gain_right * delayed(x, itd / 2)], axis=1)


def clip_params(azimuth_deg: float) -> dict[str, Any]:
    itd, ild = cues(azimuth_deg)
    side = "left" if azimuth_deg > 0 else "right" if azimuth_deg < 0 else "centre"
    return {"azimuth_deg": round(float(azimuth_deg), 4), "itd_us": round(itd * 1e6, 4), "ild_db": round(ild, 4), "side": side}


def mirrored(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters of the channel-swapped clip."""
    flipped = {k: (0.0 - v if k in SIGNED else v) for k, v in params.items()}
    flipped["side"] = {"left": "right", "right": "left"}.get(params["side"], params["side"])
    return flipped


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    timbre = roved_timbre(rng)
    onset, length = roved_gate(rng)
    n = frames(CLIP_S)
    stereo = finish(lateralised(render(timbre, n, rng) * gate(n, frames(onset), frames(length)), step), rng)
    params = clip_params(step)
    if answer == "B":  # the exact mirror of the same draw: side is the only difference
        stereo, params = stereo[:, ::-1].copy(), mirrored(params)
    return Trial((stereo,), (params,), {**timbre, "onset_s": onset, "sound_s": length})


def measure(clip: np.ndarray, sr: int) -> float:
    """Lateralisation: ILD / 10 dB + ITD / its maximum, from the channel powers and the cross-correlation peak."""
    left, right = np.asarray(clip[:, 0], dtype=np.float64), np.asarray(clip[:, 1], dtype=np.float64)
    ild = 10 * np.log10(np.sum(left**2) / np.sum(right**2))
    return float(ild / ILD_MAX_DB + interaural_delay(left, right, sr) / ITD_MAX_S)


def interaural_delay(left: np.ndarray, right: np.ndarray, sr: int, upsample: int = 4) -> float:
    """How much the right channel lags the left (s), from the cross-correlation peak within +-1 ms."""
    size = 1 << int(np.ceil(np.log2(2 * left.size)))
    cc = np.fft.irfft(np.conj(np.fft.rfft(left, size)) * np.fft.rfft(right, size), size * upsample)
    reach = int(0.001 * sr * upsample)
    window = np.concatenate((cc[-reach:], cc[: reach + 1]))  # lags -reach..+reach
    i = int(np.clip(np.argmax(window), 1, window.size - 2))
    a, b, c = window[i - 1], window[i], window[i + 1]
    peak = i + 0.5 * (a - c) / (a - 2 * b + c) if (a - 2 * b + c) != 0 else i
    return float((peak - reach) / (sr * upsample))
