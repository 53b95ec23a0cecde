"""Duration pairs: one sound that lasts longer in one clip (100, 40, 15, 7, 3 % longer; about 10 % is the human limen)."""
# Both clips start at the same moment and are padded to the same file length. Roved per question: source
# and timbre, onset, and the mean sound length (0.3-0.55 s); per clip: the level (stimuli/level.py), so
# neither energy nor the level while it sounds carries the answer.

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.level import finish
from acousticbench.benchmarks.acoustic.stimuli.signal import SR, frames, gate, mono, roved_gate, sounding
from acousticbench.benchmarks.acoustic.stimuli.sources import render, roved_timbre
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "duration"
UNIT = "percent"
STEPS = (100.0, 40.0, 15.0, 7.0, 3.0)
CATCH_STEP = 100.0
CLIP_S = 1.0
BASE_S = (0.3, 0.55)


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    timbre = roved_timbre(rng)
    onset, base = roved_gate(rng, length=BASE_S)
    ratio = (1 + step / 100) ** 0.5
    lengths = (base * ratio, base / ratio) if answer == "A" else (base / ratio, base * ratio)
    n = frames(CLIP_S)
    clips = tuple(finish(render(timbre, n, rng) * gate(n, frames(onset), frames(length)), rng) for length in lengths)
    shared = {**timbre, "base_sound_s": base, "onset_s": onset}
    return Trial(clips, tuple({"sound_s": round(frames(length) / SR, 6)} for length in lengths), shared)


def measure(clip: np.ndarray, sr: int) -> float:
    """Sounding duration (s): from the first to the last moment within 20 dB of the loudest one."""
    start, end = sounding(mono(clip))
    return (end - start) / sr
