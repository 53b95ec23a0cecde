"""Counting pairs: the same percussive event heard n and m times at irregular moments (count ratio 2, 1.5, 1.33, 1.2, 1.125)."""
# Levels are count ratios with the pairs (2,4)|(3,6), (2,3)|(4,6), (3,4)|(6,8), (5,6), (8,9); catch is (2,6).
# The first and the last event sit at the same moments in both clips, so the sounding span and onset
# carry nothing; events in between fall at random with a minimum spacing. Roved per question: the event,
# the first onset and the span; per clip: the level (stimuli/level.py), so event level does not count.

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.level import SPARSE_MID_DB, finish
from acousticbench.benchmarks.acoustic.stimuli.signal import frames, onsets
from acousticbench.benchmarks.acoustic.stimuli.sources import render_event, roved_event
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "counting"
UNIT = "count ratio"
STEPS = (2.0, 1.5, 1.333, 1.2, 1.125)
CATCH_STEP = 3.0
CLIP_S = 1.5
PAIRS = {
    3.0: ((2, 6),),
    2.0: ((2, 4), (3, 6)),
    1.5: ((2, 3), (4, 6)),
    1.333: ((3, 4), (6, 8)),
    1.2: ((5, 6),),
    1.125: ((8, 9),),
}
MIN_IOI_S = 0.11  # event (50 ms) plus a clear 60 ms gap: separate events, never a blur


def event_times(rng: np.random.Generator, count: int, first: float, span: float) -> list[float]:
    """`count` onsets from `first` to `first + span`, the inner ones uniform at random, never closer than MIN_IOI_S."""
    slack = span - (count - 1) * MIN_IOI_S
    inner = np.sort(rng.uniform(0.0, slack, count - 2)) + MIN_IOI_S * np.arange(1, count - 1)
    return [first, *(first + inner).tolist(), first + span]


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    params = roved_event(rng)
    event = render_event(params, rng)
    first = round(float(rng.uniform(0.03, 0.08)), 3)
    span = round(float(rng.uniform(1.0, CLIP_S - first - params["event_s"] - 0.03)), 3)
    if step == 0:
        counts = (int(rng.integers(2, 10)),) * 2
    else:
        low, high = PAIRS[step][int(rng.integers(len(PAIRS[step])))]
        counts = (high, low) if answer == "A" else (low, high)
    n = frames(CLIP_S)
    clips = []
    for count in counts:
        x = np.zeros(n)
        for t in event_times(rng, count, first, span):
            x[frames(t) : frames(t) + event.size] += event
        clips.append(finish(x, rng, SPARSE_MID_DB))
    shared = {**params, "onset_s": first, "span_s": span}
    return Trial(tuple(clips), tuple({"events": c} for c in counts), shared)


def measure(clip: np.ndarray, sr: int) -> float:
    """Number of separate events: onsets found with a level hysteresis."""
    return float(onsets(clip).size)
