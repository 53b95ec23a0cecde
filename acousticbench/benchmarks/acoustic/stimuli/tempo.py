"""Tempo pairs: regular trains of one short sound, one faster (beat intervals 50, 20, 8, 4, 2 % apart; ~3 % is the human limen)."""
# The pack of fixed 50 ms events running to the end of the file put more sound in the faster train (silent fraction
# 0.76-0.80). Now every clip draws its own span (first onset to last offset, 0.8-1.3 s), where it starts, and its
# TOTAL sounding time (0.25-0.45 s), all apart from the rate; the bursts share that total evenly, so each lasts the
# same share of its interval at any tempo (as a legato or staccato player keeps it) and the duty cycle, span, onset,
# offset, energy and crest factor carry nothing. The beat count is the span over the interval: a reading of the rate
# that the span's rove only dilutes, reported by the audit as the attribute's own measure. Roved per question: the
# sound (tone or noise band, its frequency) and the mean interval (0.18-0.3 s); per clip: the level (stimuli/level.py).
# Equal beats still told the faster train by how far its loudest frame and beat stood above the mean (the joint fit,
# 0.625, weighed peak and event levels most): so each beat's level is one of `count` evenly spaced steps over a spread
# roved per clip (SPREAD_DB), in random order, as in counting.py; the joint fit now scores 0.54, the best cue 0.58.

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.level import SPARSE_MID_DB, finish
from acousticbench.benchmarks.acoustic.stimuli.signal import SR, frames, onsets
from acousticbench.benchmarks.acoustic.stimuli.sources import render_burst, roved_event
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "tempo"
UNIT = "percent"
STEPS = (50.0, 20.0, 8.0, 4.0, 2.0)
CATCH_STEP = 50.0
CLIP_S = 1.5
IOI_S = (0.18, 0.3)
SPAN_S = (0.8, 1.3)
TOTAL_S = (0.25, 0.45)
SPREAD_DB = (0.0, 6.0)  # the beats' levels, evenly spaced over this roved spread in random order, as in counting.py
EDGE_S = 0.03  # the train keeps this far from both ends of the file


def beat_train(params: dict, ioi: float, rng: np.random.Generator, n: int) -> tuple[np.ndarray, dict]:
    """One clip: as many beats as fit the roved span best, each lasting the roved total over the count."""
    span, total = float(rng.uniform(*SPAN_S)), float(rng.uniform(*TOTAL_S))
    count = max(3, int(round((span - total / (span / ioi + 1)) / ioi)) + 1)
    length = frames(total / count)
    first = frames(rng.uniform(EDGE_S, CLIP_S - EDGE_S - (count - 1) * ioi - length / SR))
    levels = rng.permutation(np.linspace(-0.5, 0.5, count)) * rng.uniform(*SPREAD_DB)
    x = np.zeros(n)
    for k in range(count):
        start = first + frames(k * ioi)
        x[start : start + length] += render_burst(params, length, rng) * 10 ** (levels[k] / 20)
    actual = {"ioi_s": round(ioi, 6), "bpm": round(60 / ioi, 3), "events": count, "onset_s": round(first / SR, 6),
              "span_s": round(((count - 1) * frames(ioi) + length) / SR, 6), "sounding_s": round(count * length / SR, 6)}
    return x, actual


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    params = roved_event(rng)
    base = float(rng.uniform(*IOI_S))
    ratio = (1 + step / 100) ** 0.5
    iois = (base / ratio, base * ratio) if answer == "A" else (base * ratio, base / ratio)
    n = frames(CLIP_S)
    clips, clip_params = [], []
    for ioi in iois:
        x, actual = beat_train(params, ioi, rng, n)
        clips.append(finish(x, rng, SPARSE_MID_DB))
        clip_params.append(actual)
    return Trial(tuple(clips), tuple(clip_params), {**params, "base_ioi_s": round(base, 6)})


def measure(clip: np.ndarray, sr: int) -> float:
    """Onset rate (events per second): the least-squares slope of onset time against event index."""
    times = onsets(clip)
    if times.size < 2:
        return 0.0
    index = np.arange(times.size)
    return float(1.0 / np.polyfit(index, times, 1)[0])
