"""Loudness pairs: the same sound at two overall levels (10, 4, 2, 1, 0.5 dB apart; 0.5 dB is about the human limen)."""
# The whole clip is scaled, noise floor included, so "louder" holds for every moment of it. Roved per
# question: source (harmonic tone or shaped noise) and its timbre, onset, length, and the mean level
# (-34 to -22 dBFS RMS); phases and noise are fresh for every clip.

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.level import finish_at_rms
from acousticbench.benchmarks.acoustic.stimuli.signal import db, frames, gate, rms, roved_gate
from acousticbench.benchmarks.acoustic.stimuli.sources import render, roved_timbre
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "loudness"
UNIT = "dB"
STEPS = (10.0, 4.0, 2.0, 1.0, 0.5)
CATCH_STEP = 10.0
CLIP_S = 0.8
LEVEL_DBFS = (-34.0, -22.0)


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    timbre = roved_timbre(rng)
    onset, length = roved_gate(rng)
    base = round(float(rng.uniform(*LEVEL_DBFS)), 3)
    sign = 1.0 if answer == "A" else -1.0
    levels = (base + sign * step / 2, base - sign * step / 2)
    n = frames(CLIP_S)
    envelope = gate(n, frames(onset), frames(length))
    clips = tuple(finish_at_rms(render(timbre, n, rng) * envelope, rng, 10 ** (level / 20)) for level in levels)
    shared = {**timbre, "base_level_dbfs": base, "onset_s": onset, "sound_s": length}
    return Trial(clips, tuple({"level_dbfs": round(level, 4)} for level in levels), shared)


def measure(clip: np.ndarray, sr: int) -> float:
    """Overall RMS level of the clip in dBFS."""
    return db(rms(clip))
