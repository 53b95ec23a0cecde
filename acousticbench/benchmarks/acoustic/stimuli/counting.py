"""Counting pairs: n and m bursts of one sound at irregular moments (count ratio 1.5, 1.33, 1.25, 1.2, 1.125)."""
# Levels are count ratios with the pairs (4,6)|(6,9), (3,4)|(6,8), (4,5)|(8,10), (5,6), (8,9); catch is (2,6).
# Number is rate times span, and sounding time over burst length: no rove makes all of them chance, so each pair
# draws the log ratio of its spans (first onset to last offset) uniformly over all a 5 s clip allows (0.2-4.5 s),
# centred half way between span's break-even (0) and one half way from the rate's to the mean gap's: "longer",
# "busier" and "shorter gaps" each say "more" about half of the time at every level (0.50-0.58, README,
# bench/rival_cues.py). Each clip's duty (the share of its span that sounds) is drawn apart from the span, its log
# ratio uniform over all DUTY allows either way, so "more sound" and "shorter bursts" follow the span's balance. The
# steps start at 1.5 (2 before issue 35): at ratio 2 the span ratio a clip allows could not hide the count (span,
# rate and mean gap answered 0.62-0.64 at level 1 however the rove was centred), and count 2's one interval could not
# be irregular (the clip with more intervals was the more irregular 0.85 of the time).
# Within a clip, bursts and gaps are two-point spreads (1 +- LENGTH_SPREAD, 1 +- GAP_SPREAD of their even share) and
# the burst levels evenly spaced over a spread roved per clip (0-2 dB), each in random order: the longest burst, the
# loudest, the irregularity of the intervals and the mean level sit at the same place for any count (random shares
# put the count into how far the longest and loudest stand above the mean: 0.575 for the loudest event). Every burst
# of a clip has one shape, stretched: its raised-cosine ramps take a share of it drawn per clip (TAPER), so the rise
# of the first burst or the fall of the last does not tell a burst's length (with the sounding time, the count).
# Roved per question: the sound; per clip: onset, span, duty, ramp share, levels.

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.balance import balanced_pair
from acousticbench.benchmarks.acoustic.stimuli.level import SPARSE_MID_DB, finish
from acousticbench.benchmarks.acoustic.stimuli.signal import SR, frames, onsets
from acousticbench.benchmarks.acoustic.stimuli.sources import render_burst, roved_event
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "counting"
UNIT = "count ratio"
STEPS = (1.5, 1.333, 1.25, 1.2, 1.125)
CATCH_STEP = 3.0
CLIP_S = 5.0
PAIRS = {
    3.0: ((2, 6),),
    1.5: ((4, 6), (6, 9)),
    1.333: ((3, 4), (6, 8)),
    1.25: ((4, 5), (8, 10)),
    1.2: ((5, 6),),
    1.125: ((8, 9),),
}
DUTY = (0.2, 0.5)  # the share of its span a clip sounds, drawn per clip
LENGTH_SPREAD = 0.3  # a burst is 1.3 or 0.7 times its even share of the sounding time
GAP_SPREAD = 0.6  # a gap's silence beyond MIN_GAP_S is 1.6 or 0.4 times its even share
MIN_GAP_S = 0.05  # silence between bursts: separate events, never a blur
MIN_BURST_S = 0.015  # the even share of the shortest clip's sounding time: no burst too short to be heard as one
ONSET_S = (0.15, 0.3)
LONGEST_SPAN_S = CLIP_S - ONSET_S[1] - 0.16  # room for the last burst's ramp, stretched past the span (clip())
GAP_WEIGHT = 0.5  # the break-even the span ratio is balanced against lies this far from the rate's to the mean gap's
SPREAD_DB = (0.0, 2.0)
TAPER = (0.1, 0.45)  # the share of each burst its ramps take, drawn per clip: one shape for all its bursts, stretched


def shortest_span(count: int) -> float:
    """The shortest span that holds `count` bursts of MIN_BURST_S and their gaps at any duty cycle."""
    return max(count * MIN_BURST_S / DUTY[0], (count - 1) * MIN_GAP_S / (1 - DUTY[1]))


def pair_plan(rng: np.random.Generator, fewer: int, more: int) -> dict[int, tuple[float, float]]:
    """{count: (span, duty)} of the two clips. The log span ratio (more over fewer) is uniform over all the clip
    allows around the middle of span's break-even (0) and the rival's (GAP_WEIGHT of the way from the rate's to the
    mean gap's); the log duty ratio is uniform over all DUTY allows either way, apart from it."""
    rate_even, gap_even = np.log(more / fewer), np.log((more - 1) / (fewer - 1))
    centre = (rate_even + GAP_WEIGHT * (gap_even - rate_even)) / 2
    spans = balanced_pair(rng, (shortest_span(more), LONGEST_SPAN_S), centre)
    duties = balanced_pair(rng, DUTY, 0.0)
    return {more: (spans[0], duties[0]), fewer: (spans[1], duties[1])}


def two_point(rng: np.random.Generator, size: int, spread: float) -> np.ndarray:
    """`size` weights of mean 1, half 1 + spread and half 1 - spread (an odd one out at 1), in random order: the
    largest over the mean, and the spread, are the same for any count (random draws would put both in the count)."""
    values = np.concatenate((np.full(size // 2, 1.0 + spread), np.full(size // 2, 1.0 - spread), np.ones(size % 2)))
    return rng.permutation(values)


def burst_plan(rng: np.random.Generator, count: int, first: float, span: float, duty: float) -> tuple[list[float], list[float], float]:
    """(onsets, lengths, total) of `count` bursts from `first` to `first + span`, sounding `duty` of it, their
    lengths and the gaps between them (none under MIN_GAP_S) each two-point spread in random order."""
    total = duty * span
    lengths = total * two_point(rng, count, LENGTH_SPREAD) / count
    slack = span - total - (count - 1) * MIN_GAP_S
    gaps = MIN_GAP_S + slack * two_point(rng, count - 1, GAP_SPREAD) / (count - 1)
    starts = first + np.concatenate(([0.0], np.cumsum(lengths[:-1] + gaps)))
    return starts.tolist(), lengths.tolist(), total


def burst_levels_db(rng: np.random.Generator, count: int) -> np.ndarray:
    """`count` levels evenly spaced over a roved spread around 0 dB, in random order."""
    spread = rng.uniform(*SPREAD_DB)
    return rng.permutation(np.linspace(-spread / 2, spread / 2, count))


def below_threshold_s(length: float, taper: float, level_db: float, loudest_db: float) -> float:
    """How long the start of a burst's raised-cosine ramp stays more than 20 dB under the loudest burst."""
    amplitude = 10 ** ((-20.0 - (level_db - loudest_db)) / 20)
    return taper * length * float(np.arccos(1 - 2 * min(amplitude, 1.0))) / np.pi


def clip(params: dict, count: int, first: float, span: float, duty: float, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """One clip of `count` bursts and its total sounding time; the outer bursts are stretched by the quiet start of
    their ramps, so the first and the last moment within 20 dB of the peak are the shared `first` and `first + span`."""
    starts, lengths, total = burst_plan(rng, count, first, span, duty)
    levels, taper = burst_levels_db(rng, count), float(rng.uniform(*TAPER))
    early = below_threshold_s(lengths[0], taper, levels[0], levels.max())
    late = below_threshold_s(lengths[-1], taper, levels[-1], levels.max())
    starts[0], lengths[0], lengths[-1] = starts[0] - early, lengths[0] + early, lengths[-1] + late
    x = np.zeros(frames(CLIP_S))
    for start, length, level in zip(starts, lengths, levels):
        size = frames(start + length) - frames(start)
        burst = render_burst(params, size, rng, taper * size / SR) * 10 ** (level / 20)
        x[frames(start) : frames(start) + size] += burst
    return x, total


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    params = roved_event(rng)
    if step == 0:
        low = high = int(rng.integers(2, 10))
    else:
        low, high = PAIRS[step][int(rng.integers(len(PAIRS[step])))]
    return counted(rng, params, low, high, answer)


def counted(rng: np.random.Generator, params: dict, low: int, high: int, answer: Answer) -> Trial:
    """The pair of `low` and `high` bursts of the sound `params` ("A": the first has more); adaptive runs ask any
    pair, the pack only its PAIRS."""
    plans = pair_plan(rng, low, high) if low != high else {low: pair_plan(rng, low, low + 1)[low]}
    counts = (high, low) if answer == "A" else (low, high)
    clips, clip_params = [], []
    for count in counts:
        span, duty = round(plans[count][0], 3), plans[count][1]
        first = round(float(rng.uniform(*ONSET_S)), 3)
        x, total = clip(params, count, first, span, duty, rng)
        clips.append(finish(x, rng, SPARSE_MID_DB))
        clip_params.append({"events": count, "sounding_s": round(total, 6), "onset_s": first, "span_s": span,
                            "duty": round(duty, 6)})
    shared = params
    return Trial(tuple(clips), tuple(clip_params), shared)


def measure(clip: np.ndarray, sr: int) -> float:
    """Number of separate events: onsets found with a level hysteresis on a 10 ms envelope (gaps last 60 ms or more)."""
    return float(onsets(clip, window_s=0.01).size)
