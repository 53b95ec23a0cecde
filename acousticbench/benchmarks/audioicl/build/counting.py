"""AudioCount(Hard): one struck sound heard 1-8 times at irregular moments; the hard clips sit in pink background noise."""
from __future__ import annotations

from typing import Any

import numpy as np

from acousticbench.benchmarks.audioicl.build.plan import EPISODES_PER_TASK, MAX_SHOTS, ClipJob, TaskPlan, rng, seeded, single_episode
from acousticbench.benchmarks.audioicl.build.sounds import frames, percussive, pink_noise, roved_percussive

SOUNDS = 30  # sounds per task; every sound is heard at every count, and episodes share them
COUNTS = tuple(range(1, 9))
CLIP_S = 1.2  # the same for every count: the clip's length says nothing about the count
EVENT_S = 0.12
MIN_IOI_S = 0.13  # a struck sound decays 30 dB well within this: separate events, never a blur
PEAK = 0.6


def plan(task: str) -> TaskPlan:
    hard = task.endswith("Hard")
    folder = f"data/audiocount/{'hard' if hard else 'easy'}"
    order = rng(task, "plan")
    clips: dict[str, ClipJob] = {}
    path_of: dict[tuple[int, int], str] = {}
    for s in range(SOUNDS):
        sound = roved_percussive(rng(task, "sound", s), max_decay_s=0.03)
        names = order.permutation(len(COUNTS))  # file names do not give the count away
        for count, name in zip(COUNTS, names):
            path = path_of[s, count] = f"{folder}/s{s:03d}_{name}.wav"
            clips[path] = ClipJob(path, "count", seeded({"sound": sound, "count": count, "hard": hard}, task, s, count))
    episodes = []
    for i in range(EPISODES_PER_TASK):
        s = i % SOUNDS
        counts = order.choice(COUNTS, MAX_SHOTS + 1, replace=False)  # distinct counts: demos, then the query
        episodes.append(single_episode(task, i, [(path_of[s, int(c)], str(int(c))) for c in counts]))
    return TaskPlan(episodes, clips)


def event_times(rng_: np.random.Generator, count: int) -> list[float]:
    """`count` onsets in the clip, uniform at random with at least MIN_IOI_S between them."""
    first, last = 0.05, CLIP_S - EVENT_S - 0.03
    slack = (last - first) - (count - 1) * MIN_IOI_S
    starts = np.sort(rng_.uniform(0.0, slack, count)) + MIN_IOI_S * np.arange(count)
    return (first + starts).tolist()


def render(params: dict[str, Any], rng_: np.random.Generator) -> np.ndarray:
    event = percussive(params["sound"], EVENT_S)
    x = np.zeros(frames(CLIP_S))
    low = 0.6 if params["hard"] else 0.75  # hits vary in strength, a little more in the hard variant
    for t in event_times(rng_, params["count"]):
        start = frames(t)
        x[start : start + event.size] += float(rng_.uniform(low, 1.0)) * event
    x *= PEAK / np.abs(x).max()
    if params["hard"]:
        snr_db = float(rng_.uniform(18.0, 22.0))  # loudest hit's peak over the noise RMS
        x += pink_noise(x.size, rng_) * PEAK * 10 ** (-snr_db / 20)
    else:
        x += rng_.standard_normal(x.size) * PEAK * 10 ** (-55 / 20)  # a faint noise floor, never digital silence
    return x
