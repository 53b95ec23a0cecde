"""Reverberation pairs: one dry sound in two synthetic rooms whose RT60 differs (200, 80, 40, 20, 10 %; 5-10 % is the human limen)."""
# Each room is a direct impulse plus an exponentially decaying Gaussian tail (a fresh draw per clip) holding the
# same energy in both rooms (one direct-to-reverberant ratio), so only the decay tells them apart. Roved per
# question: source and timbre, onset, mean RT60 (0.25-0.5 s), that ratio (-3 to +3 dB); per clip: the level
# (stimuli/level.py), the sounding span and a fade-in (issue 20). With one fixed dry sound a longer decay lengthens
# the sounding span: span, silent fraction and overall-minus-sounding level answered 0.96-0.98 alone and 0.955
# jointly. So each clip's span (onset to the last moment within 20 dB of its loudest) is drawn over SPAN_S on its own
# and the dry sound is lengthened or shortened until the wet clip sounds that long; the reverberant clip then has the
# shorter dry sound and more of its span below its peak, which a fade-in of roved length (level statistics cannot
# tell it from a decay) blurs; what the tail's own sounding frames carry (0.60-0.63: peak or sounding level minus the
# fragments' level) is a T20, listed among rad's measures. The best other cue now scores 0.575, all together 0.545.
# The Oracle fits the energy decay after the dry sound has ended (issue 20: it fitted from the loudest moment, which a
# long dry sound puts far before the tail): 0.99 on scored questions, 1.0 on catch trials.

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.level import SPARSE_MID_DB, finish
from acousticbench.benchmarks.acoustic.stimuli.signal import SR, frames, gate, mono, sounding
from acousticbench.benchmarks.acoustic.stimuli.sources import render, roved_timbre
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "reverberation"
UNIT = "percent"
STEPS = (200.0, 80.0, 40.0, 20.0, 10.0)
CATCH_STEP = 200.0
CLIP_S = 2.0
RT60_S = (0.25, 0.5)
SPAN_S = (0.6, 1.1)  # each clip's sounding span, drawn on its own: wider than the longest tail's share of it
MIN_DRY_S = 0.04
RISE_S = (0.0, 0.5)  # drawn per clip: a fade-in, which level statistics cannot tell from a decay, of roved length
FADE_IN_DB = 30.0
FITTING_ROUNDS = 5  # the dry length is corrected this often toward the drawn span (a few ms off at the end)
DECAY_60DB = np.log(1000.0)  # amplitude factor exp(-6.91 t / RT60) is -60 dB at t = RT60
FLOOR_S = 0.04  # every onset is later: the clip's first 40 ms are only its background
TAIL_DB = 8.0  # after the last moment within this of the loudest, the dry sound is over: only the tail is left
FIT_DB = (-1.0, -30.0)  # the stretch of the tail's energy decay curve the RT60 is fitted on
FLOOR_MARGIN_DB = 3.0  # the curve is summed only until the tail is this close to the background


def room(rng: np.random.Generator, n: int, rt60: float, tail_gain: float) -> np.ndarray:
    """Impulse response: a unit direct path, then from 1 ms a decaying noise tail."""
    t = np.arange(n) / SR
    h = tail_gain * rng.standard_normal(n) * np.exp(-DECAY_60DB * t / rt60)
    h[: frames(0.001)] = 0.0
    h[0] = 1.0
    return h


def fading_in(n: int, onset: float, length: float, rise_s: float) -> np.ndarray:
    """The dry sound's gate with a fade-in that rises FADE_IN_DB, evenly in dB, over its first `rise_s` seconds."""
    progress = np.clip((np.arange(n) / SR - onset) / max(rise_s, 1e-9), 0.0, 1.0)
    return gate(n, frames(onset), frames(length)) * 10 ** (-FADE_IN_DB * (1.0 - progress) / 20)


def spanned(source: np.ndarray, h: np.ndarray, onset: float, span: float, rise_s: float) -> tuple[np.ndarray, float]:
    """`source` gated from `onset`, faded in over `rise_s` and convolved with `h`, its dry length fitted so that the
    wet clip sounds `span` s."""
    n, size = source.size, source.size + h.size  # long enough that nothing wraps around
    room_spectrum = np.fft.rfft(h, size)
    length = max(MIN_DRY_S + rise_s, span - 0.1)
    for _ in range(FITTING_ROUNDS):
        dry = source * fading_in(n, onset, length, rise_s)
        wet = np.fft.irfft(np.fft.rfft(dry, size) * room_spectrum, size)[:n]
        first, last = sounding(wet)
        length = float(np.clip(length + span - (last - first) / SR, MIN_DRY_S + rise_s, span + rise_s))
    return wet, round((last - first) / SR, 4)


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    timbre = roved_timbre(rng)
    onset = round(float(rng.uniform(0.05, 0.1)), 3)
    base = float(rng.uniform(*RT60_S))
    drr_db = round(float(rng.uniform(-3.0, 3.0)), 3)
    ratio = (1 + step / 100) ** 0.5
    rt60s = (base * ratio, base / ratio) if answer == "A" else (base / ratio, base * ratio)
    n = frames(CLIP_S)
    source = render(timbre, n, rng)
    clips, params = [], []
    for rt60 in rt60s:
        span, rise_s = round(float(rng.uniform(*SPAN_S)), 3), round(float(rng.uniform(*RISE_S)), 3)
        tail_gain = np.sqrt(2 * DECAY_60DB / (SR * rt60 * 10 ** (drr_db / 10)))  # tail energy = 1 / DRR in both rooms
        wet, measured = spanned(source, room(rng, n, rt60, tail_gain), onset, span, rise_s)
        clips.append(finish(wet, rng, SPARSE_MID_DB))
        params.append({"rt60_s": round(rt60, 6), "span_s": measured, "fade_in_s": rise_s})
    shared = {**timbre, "base_rt60_s": round(base, 6), "drr_db_at_base": drr_db, "onset_s": onset}
    return Trial(tuple(clips), tuple(params), shared)


def measure(clip: np.ndarray, sr: int) -> float:
    """Decay time (s): RT60 from the slope of the Schroeder energy decay curve of the tail after the dry sound ends."""
    power = np.square(mono(clip))
    hop = frames(0.005)
    blocks = power[: power.size // hop * hop].reshape(-1, hop).mean(axis=1)
    lead = blocks[: int(FLOOR_S * sr) // hop]
    floor = lead.mean() if lead.size else blocks.min(initial=0.0)  # a clip shorter than the lead-in: its quietest block
    smooth = np.convolve(blocks, np.ones(4) / 4, mode="same")  # 20 ms: a noise source's dips do not end it early
    level = 10 * np.log10(smooth + 1e-30)
    start = int(np.flatnonzero(level >= level.max() - TAIL_DB)[-1]) + 2
    above = np.flatnonzero(level[start:] <= 10 * np.log10(floor + 1e-30) + FLOOR_MARGIN_DB)
    end = start + int(above[0]) if above.size else blocks.size  # where the tail meets the background, as Lundeby cuts it
    if end - start < 3:  # the sound lasts to the end of the clip: no tail to measure
        return 0.0
    edc = np.cumsum((blocks[start:end] - floor)[::-1])[::-1]  # unclipped: the background's blocks cancel on average
    edc_db = 10 * np.log10(np.maximum(edc, 1e-30) / max(edc[0], 1e-30))
    fit = np.flatnonzero((edc_db <= FIT_DB[0]) & (edc_db >= FIT_DB[1]))
    if fit.size < 3:
        return 0.0
    slope = np.polyfit(fit * hop / sr, edc_db[fit], 1)[0]
    return float(-60.0 / slope)
