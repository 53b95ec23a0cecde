"""Counting pairs: n and m bursts of one sound at irregular moments (count ratio 2, 1.5, 1.33, 1.2, 1.125)."""
# Levels are count ratios with the pairs (2,4)|(3,6), (2,3)|(4,6), (3,4)|(6,8), (5,6), (8,9); catch is (2,6).
# Number is rate times span: a pair of equal spans (the pack before issue 35) let the rate answer (0.945 on eval) and
# the mean gap (0.93). As numerosity experiments rove duration against number, each pair draws the log ratio of its
# spans (first onset to last offset) over all a clip allows, centred between span's break-even and the mean gap's
# (stimuli/balance.py): "longer" says "more" about as often as "busier" and "shorter gaps" do. Each clip sounds
# its own share of its span (DUTY), drawn so that "more sound" and "shorter bursts" are balanced the same way, and
# shared out over its bursts at random (each 0.74-1.35 times its even share). Number, rate and span cannot all be
# at chance (rate times span IS the number): at ratio 2 (level 1) each is right 0.6-0.8 of the time, over all of eval
# 0.55-0.62 (README, bench/rival_cues.py). The clip is 3 s long so that spans can differ widely (0.4-2.7 s).
# Each burst's level is one of n evenly spaced steps over a spread roved per clip (0-2 dB), in random order: the
# loudest and the mean level sit at the same place for any count (a wider spread puts more of the sound at its loudest
# step the fewer the bursts: 0.615 at 0-6 dB). Roved per question: the sound; per clip: onset, span, duty, level.

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.balance import balanced_pair
from acousticbench.benchmarks.acoustic.stimuli.level import SPARSE_MID_DB, finish
from acousticbench.benchmarks.acoustic.stimuli.signal import SR, frames, onsets
from acousticbench.benchmarks.acoustic.stimuli.sources import render_burst, roved_event
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "counting"
UNIT = "count ratio"
STEPS = (2.0, 1.5, 1.333, 1.2, 1.125)
CATCH_STEP = 3.0
CLIP_S = 3.0
PAIRS = {
    3.0: ((2, 6),),
    2.0: ((2, 4), (3, 6)),
    1.5: ((2, 3), (4, 6)),
    1.333: ((3, 4), (6, 8)),
    1.2: ((5, 6),),
    1.125: ((8, 9),),
}
DUTY = (0.2, 0.5)  # the share of its span a clip sounds, drawn per clip
SHARE = (0.74, 1.35)  # a burst's length over its even share of the total, before renormalising
MIN_GAP_S = 0.06  # silence between bursts: separate events, never a blur
MIN_BURST_S = 0.02  # the even share of the shortest clip's sounding time: no burst too short to be heard as one
ONSET_S = (0.06, 0.2)
LONGEST_SPAN_S = CLIP_S - ONSET_S[1] - 0.06
SPAN_BALANCE = 0.4  # the span ratio's centre over the mean gap's break-even: nearer span's, which the audit reads too
SPREAD_DB = (0.0, 2.0)
TAPER = 0.4  # each ramp is this share of its burst: every burst has one shape, stretched, so none is peakier


def shortest_span(count: int) -> float:
    """The shortest span that holds `count` bursts of MIN_BURST_S and their gaps at any duty cycle."""
    return max(count * MIN_BURST_S / DUTY[0], (count - 1) * MIN_GAP_S / (1 - DUTY[1]))


def pair_plan(rng: np.random.Generator, fewer: int, more: int) -> dict[int, tuple[float, float]]:
    """{count: (span, duty)} of the two clips. The log span ratio (more over fewer) is centred between span's
    break-even (0) and the mean gap's (log (more-1)/(fewer-1)); the log duty ratio so that the sounding time's log
    ratio is centred half way between its own break-even and the mean burst length's (log more/fewer)."""
    gap_even, length_even = np.log((more - 1) / (fewer - 1)), np.log(more / fewer)
    centre = SPAN_BALANCE * gap_even
    spans = balanced_pair(rng, (shortest_span(more), LONGEST_SPAN_S), centre)
    duties = balanced_pair(rng, DUTY, length_even / 2 - centre)
    return {more: (spans[0], duties[0]), fewer: (spans[1], duties[1])}


def burst_plan(rng: np.random.Generator, count: int, first: float, span: float, duty: float) -> tuple[list[float], list[float], float]:
    """(onsets, lengths, total) of `count` bursts from `first` to `first + span`, sounding `duty` of it, gaps at
    random, none under MIN_GAP_S."""
    total = duty * span
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


def clip(params: dict, count: int, first: float, span: float, duty: float, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """One clip of `count` bursts and its total sounding time; the outer bursts are stretched by the quiet start of
    their ramps, so the first and the last moment within 20 dB of the peak are the shared `first` and `first + span`."""
    starts, lengths, total = burst_plan(rng, count, first, span, duty)
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
        low = high = int(rng.integers(2, 10))
    else:
        low, high = PAIRS[step][int(rng.integers(len(PAIRS[step])))]
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
