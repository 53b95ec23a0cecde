"""Tempo pairs: regular trains of one percussive event, one faster (beat intervals 50, 20, 8, 4, 2 % apart; ~3 % is the human limen)."""
# Both trains start at the same moment and run to the end of equal-length files (as with any faster beat,
# more events fit in the same time). Roved per question: the event (struck tone or noise hit, its frequency
# and decay), the first onset, and the mean interval (0.18-0.3 s); per clip: the level (stimuli/level.py),
# so the faster train's events are not the quieter ones.

from __future__ import annotations

import numpy as np

from acousticbench.benchmarks.acoustic.stimuli.level import SPARSE_MID_DB, finish
from acousticbench.benchmarks.acoustic.stimuli.signal import frames, onsets
from acousticbench.benchmarks.acoustic.stimuli.sources import render_event, roved_event
from acousticbench.benchmarks.acoustic.stimuli.trial import Answer, Trial

ATTRIBUTE = "tempo"
UNIT = "percent"
STEPS = (50.0, 20.0, 8.0, 4.0, 2.0)
CATCH_STEP = 50.0
CLIP_S = 1.5
IOI_S = (0.18, 0.3)
TAIL_S = 0.02  # the last event ends at least this long before the end of the file


def beat_train(event: np.ndarray, first: float, ioi: float, n: int) -> tuple[np.ndarray, int]:
    """Events every `ioi` seconds from `first`, as many as fit; returns the signal and the event count."""
    x = np.zeros(n)
    starts = [frames(first + k * ioi) for k in range(int(CLIP_S / ioi) + 1)]
    starts = [s for s in starts if s + event.size <= n - frames(TAIL_S)]
    for s in starts:
        x[s : s + event.size] += event
    return x, len(starts)


def trial(rng: np.random.Generator, step: float, answer: Answer) -> Trial:
    params = roved_event(rng)
    event = render_event(params, rng)
    first = round(float(rng.uniform(0.03, 0.08)), 3)
    base = float(rng.uniform(*IOI_S))
    ratio = (1 + step / 100) ** 0.5
    iois = (base / ratio, base * ratio) if answer == "A" else (base * ratio, base / ratio)
    n = frames(CLIP_S)
    clips, clip_params = [], []
    for ioi in iois:
        x, count = beat_train(event, first, ioi, n)
        clips.append(finish(x, rng, SPARSE_MID_DB))
        clip_params.append({"ioi_s": round(ioi, 6), "bpm": round(60 / ioi, 3), "events": count})
    shared = {**params, "base_ioi_s": round(base, 6), "onset_s": first}
    return Trial(tuple(clips), tuple(clip_params), shared)


def measure(clip: np.ndarray, sr: int) -> float:
    """Onset rate (events per second): the least-squares slope of onset time against event index."""
    times = onsets(clip)
    if times.size < 2:
        return 0.0
    index = np.arange(times.size)
    return float(1.0 / np.polyfit(index, times, 1)[0])
