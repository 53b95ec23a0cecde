"""AudioLength(Hard): noise-floor clips whose label is the number of seconds with sound; hard clips hold a silent stretch."""
from __future__ import annotations

from typing import Any

import numpy as np

from acousticbench.benchmarks.audioicl.build.plan import EPISODES_PER_TASK, MAX_SHOTS, ClipJob, TaskPlan, rng, seeded, single_episode
from acousticbench.benchmarks.audioicl.build.sounds import frames, percussive, roved_percussive

LABELS = tuple(range(1, 9))  # seconds with sound
VARIANTS = 5  # clips per label
SILENCES = (1, 2, 3)  # hard: seconds of digital silence in one stretch, so the clip's length misleads
NOISE_RMS = 0.03


def plan(task: str) -> TaskPlan:
    hard = task.endswith("Hard")
    folder = f"data/audiolength/{'hard' if hard else 'easy'}"
    order = rng(task, "plan")
    names = order.permutation(len(LABELS) * VARIANTS)
    clips: dict[str, ClipJob] = {}
    path_of: dict[tuple[int, int], str] = {}
    for j, (label, v) in enumerate((label, v) for label in LABELS for v in range(VARIANTS)):
        path = path_of[label, v] = f"{folder}/c{names[j]:03d}.wav"
        silence = int(order.choice(SILENCES)) if hard else 0
        clips[path] = ClipJob(path, "length", seeded({"sound_s": label, "silence_s": silence}, task, label, v))
    episodes = []
    for i in range(EPISODES_PER_TASK):
        labels = order.choice(LABELS, MAX_SHOTS + 1, replace=False)
        shots = [(path_of[int(label), int(order.integers(VARIANTS))], str(int(label))) for label in labels]
        episodes.append(single_episode(task, i, shots))
    return TaskPlan(episodes, clips)


def render(params: dict[str, Any], rng_: np.random.Generator) -> np.ndarray:
    """Noise for sound_s seconds with a few struck sounds in it; a silent stretch of silence_s cut in somewhere."""
    sound = rng_.standard_normal(frames(params["sound_s"])) * NOISE_RMS
    for _ in range(int(rng_.integers(2, 7))):  # distractors: struck sounds are not what the label counts
        event = percussive(roved_percussive(rng_), 0.2) * float(rng_.uniform(0.1, 0.3))
        start = int(rng_.integers(0, sound.size - event.size))
        sound[start : start + event.size] += event
    if not params["silence_s"]:
        return sound
    cut = int(rng_.integers(0, sound.size + 1))
    return np.concatenate([sound[:cut], np.zeros(frames(params["silence_s"])), sound[cut:]])
