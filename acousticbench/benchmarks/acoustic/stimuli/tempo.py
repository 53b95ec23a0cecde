"""Tempo pairs: regular trains of one short sound, one faster (beat intervals 20, 10, 6, 4, 2 % apart; ~3 % is the human limen)."""
# A train's beat count is its span over its interval, and each beat's length and silence its interval split by its
# duty: a pair of spans and duties drawn apart from the rate (the pack before issue 35) let the faster train have more
# beats (0.70 on eval), shorter ones (0.665) and shorter silences (0.705). As tempo experiments rove count and event
# length against rate, each pair draws the log ratio of its spans (faster over slower) uniformly over all a clip
# allows, centred half way between span's break-even (0) and the count's (-log of the rate ratio), so the faster
# train has more beats about as often as the longer span. The two duties are drawn alike, whichever train is faster:
# their log odds apart uniformly over all DUTY allows, DUTY symmetric about one half, so beat and silence are mirror
# images and neither train is the denser, nor nearer an even split, more often (a pair made to give the faster train
# the longer beat or the longer silence, half and half, had to put the slower train's duty at an extreme, which the
# envelope's kurtosis read: 0.69). Each of beat and silence is then shorter in the faster train only by the rate
# ratio's share of the duties' spread: the steps start at 20 % (50 % before issue 35, where that share let the mean
# silence answer 0.97 at level 1), and the beats may be 25 ms of sound or of silence (DUTY 0.15-0.85).
# Roved per question: the sound (tone or noise band, its frequency), the mean interval (0.18-0.3 s); per clip: where
# the train starts and each beat's level: one of `count` evenly spaced steps over a spread roved per clip
# (SPREAD_DB), in random order, as in counting.py (equal beats told the faster train by its peak over its mean level).

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.balance import balanced_pair
from acousticbench.benchmarks.acoustic.stimuli.level import SPARSE_MID_DB, finish
from acousticbench.benchmarks.acoustic.stimuli.signal import SR, frames, onsets
from acousticbench.benchmarks.acoustic.stimuli.sources import render_burst, roved_event
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "tempo"
UNIT = "percent"
STEPS = (20.0, 10.0, 6.0, 4.0, 2.0)
CATCH_STEP = 50.0
CLIP_S = 3.0
IOI_S = (0.18, 0.3)
EDGE_S = 0.03  # the train keeps this far from both ends of the file
MIN_BEATS = 3
SPAN_S = (2 * IOI_S[1] * (1 + CATCH_STEP / 100) ** 0.5 + 0.1, CLIP_S - 2 * EDGE_S)  # 3 beats fit the slowest train
DUTY = (0.15, 0.85)  # a beat's share of its interval: 25 ms of sound and of silence at least (22 ms in catch trials)
SPREAD_DB = (0.0, 6.0)  # the beats' levels, evenly spaced over this roved spread in random order, as in counting.py


def beat_train(params: dict, ioi: float, span: float, duty: float, rng: np.random.Generator, n: int) -> tuple[np.ndarray, dict]:
    """One clip: as many beats of `duty` times `ioi` as fit `span`, from a random start."""
    length = frames(duty * ioi)
    fits = int((CLIP_S - 2 * EDGE_S - length / SR) / ioi) + 1
    count = min(fits, max(MIN_BEATS, int(round((span - length / SR) / ioi)) + 1))
    first = frames(rng.uniform(EDGE_S, CLIP_S - EDGE_S - (count - 1) * ioi - length / SR))
    levels = rng.permutation(np.linspace(-0.5, 0.5, count)) * rng.uniform(*SPREAD_DB)
    x = np.zeros(n)
    for k in range(count):
        start = first + frames(k * ioi)
        x[start : start + length] += render_burst(params, length, rng) * 10 ** (levels[k] / 20)
    actual = {"ioi_s": round(ioi, 6), "bpm": round(60 / ioi, 3), "events": count, "onset_s": round(first / SR, 6),
              "span_s": round(((count - 1) * frames(ioi) + length) / SR, 6), "sounding_s": round(count * length / SR, 6),
              "duty": round(length / frames(ioi), 6)}
    return x, actual


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    params = roved_event(rng)
    base = float(rng.uniform(*IOI_S))
    ratio = (1 + step / 100) ** 0.5
    # the duties drawn alike whichever train is faster (centred on 0), on their log odds: beat and silence are
    # mirror images (DUTY is symmetric about one half), so neither train is the denser, nor nearer an even split
    spans, duties = balanced_pair(rng, SPAN_S, -float(np.log(ratio))), balanced_pair(rng, DUTY, 0.0, odds=True)
    fast, slow = (base / ratio, spans[0], duties[0]), (base * ratio, spans[1], duties[1])
    n = frames(CLIP_S)
    clips, clip_params = [], []
    for ioi, span, duty in (fast, slow) if answer == "A" else (slow, fast):
        x, actual = beat_train(params, ioi, span, duty, rng, n)
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
