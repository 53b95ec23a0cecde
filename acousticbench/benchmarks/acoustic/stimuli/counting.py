"""Counting pairs: n and m bursts of one sound at irregular moments (count ratio 2, 1.5, 1.33, 1.2, 1.125)."""
# Levels are count ratios with the pairs (2,4)|(3,6), (2,3)|(4,6), (3,4)|(6,8), (5,6), (8,9); catch is (2,6).
# As numerosity experiments control for "more sound", every clip draws its TOTAL sounding time (0.36-0.6 s) apart
# from its count and shares it out over its bursts at random (each burst 0.74-1.35 times its even share), so the
# duty cycle, silent fraction, energy, crest factor and the overall-minus-sounding level (1.00 on the pack of
# 50 ms events, whose total grew with the count) carry nothing; what follows is that bursts are shorter on average
# where there are more of them (the total over the count), which no single cue of the audit reads.
# Each clip draws its own first onset and span: a span shared by the pair still measured 0.61 on eval (the auditor's
# 20 dB threshold meets a short burst's steeper ramp earlier), and a joint fit read it with onset and offset (0.655).
# Each burst's level is one of n evenly spaced steps over a spread roved per clip (0-2 dB), in random order: the
# loudest and the mean level sit at the same place for any count. The spread stays small because any spread puts
# more of the sound at its loudest step the fewer the bursts (peak minus mean event level: 0.615 at 0-6 dB, 0.575 at
# 0-2 dB, where the joint fit is 0.575). Roved per question: the sound; per clip: onset, span, level (stimuli/level.py).

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.level import SPARSE_MID_DB, finish
from acousticbench.benchmarks.acoustic.stimuli.signal import SR, frames, onsets
from acousticbench.benchmarks.acoustic.stimuli.sources import render_burst, roved_event
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "counting"
UNIT = "count ratio"
STEPS = (2.0, 1.5, 1.333, 1.2, 1.125)
CATCH_STEP = 3.0
CLIP_S = 2.0
PAIRS = {
    3.0: ((2, 6),),
    2.0: ((2, 4), (3, 6)),
    1.5: ((2, 3), (4, 6)),
    1.333: ((3, 4), (6, 8)),
    1.2: ((5, 6),),
    1.125: ((8, 9),),
}
TOTAL_S = (0.36, 0.6)  # sounding time of a clip, whatever its count: 9 bursts still last 20 ms or more each
SHARE = (0.74, 1.35)  # a burst's length over its even share of the total, before renormalising
MIN_GAP_S = 0.06  # silence between bursts: separate events, never a blur
SPREAD_DB = (0.0, 2.0)
TAPER = 0.4  # each ramp is this share of its burst: every burst has one shape, stretched, so none is peakier


def burst_plan(rng: np.random.Generator, count: int, first: float, span: float) -> tuple[list[float], list[float], float]:
    """(onsets, lengths, total) of `count` bursts from `first` to `first + span`, gaps at random, none under MIN_GAP_S."""
    total = float(rng.uniform(*TOTAL_S))
    shares = rng.uniform(*SHARE, count)
    lengths = total * shares / shares.sum()
    slack = span - total - (count - 1) * MIN_GAP_S
    gaps = MIN_GAP_S + np.diff(np.concatenate(([0.0], np.sort(rng.uniform(0.0, slack, count - 2)), [slack])))
    starts = first + np.concatenate(([0.0], np.cumsum(lengths[:-1] + gaps)))
    return starts.tolist(), lengths.tolist(), total


def burst_levels_db(rng: np.random.Generator, count: int) -> np.ndarray:
    """`count` levels evenly spaced over a roved spread around 0 dB, in random order."""
    spread = rng.uniform(*SPREAD_DB)
    return rng.permutation(np.linspace(-spread / 2, spread / 2, count))


def below_threshold_s(length: float, level_db: float, loudest_db: float) -> float:
    """How long the start of a burst's raised-cosine ramp stays more than 20 dB under the loudest burst."""
    amplitude = 10 ** ((-20.0 - (level_db - loudest_db)) / 20)
    return TAPER * length * float(np.arccos(1 - 2 * min(amplitude, 1.0))) / np.pi


def clip(params: dict, count: int, first: float, span: float, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """One clip of `count` bursts and its total sounding time; the outer bursts are stretched by the quiet start of
    their ramps, so the first and the last moment within 20 dB of the peak are the shared `first` and `first + span`."""
    starts, lengths, total = burst_plan(rng, count, first, span)
    levels = burst_levels_db(rng, count)
    early = below_threshold_s(lengths[0], levels[0], levels.max())
    late = below_threshold_s(lengths[-1], levels[-1], levels.max())
    starts[0], lengths[0], lengths[-1] = starts[0] - early, lengths[0] + early, lengths[-1] + late
    x = np.zeros(frames(CLIP_S))
    for start, length, level in zip(starts, lengths, levels):
        size = frames(start + length) - frames(start)
        x[frames(start) : frames(start) + size] += render_burst(params, size, rng, TAPER * size / SR) * 10 ** (level / 20)
    return x, total


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    params = roved_event(rng)
    if step == 0:
        counts = (int(rng.integers(2, 10)),) * 2
    else:
        low, high = PAIRS[step][int(rng.integers(len(PAIRS[step])))]
        counts = (high, low) if answer == "A" else (low, high)
    clips, clip_params = [], []
    for count in counts:
        first = round(float(rng.uniform(0.06, 0.2)), 3)
        span = round(float(rng.uniform(1.2, CLIP_S - first - 0.06)), 3)
        x, total = clip(params, count, first, span, rng)
        clips.append(finish(x, rng, SPARSE_MID_DB))
        clip_params.append({"events": count, "sounding_s": round(total, 6), "onset_s": first, "span_s": span})
    shared = params
    return Trial(tuple(clips), tuple(clip_params), shared)


def measure(clip: np.ndarray, sr: int) -> float:
    """Number of separate events: onsets found with a level hysteresis on a 10 ms envelope (gaps last 60 ms or more)."""
    return float(onsets(clip, window_s=0.01).size)
