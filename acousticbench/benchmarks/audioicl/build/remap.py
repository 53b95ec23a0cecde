"""AudioRemap: two struck sounds A and B with letters that change per episode, and MIX, three of them in a row."""
from __future__ import annotations

import itertools
import string
from typing import Any

import numpy as np

from acousticbench.benchmarks.audioicl.build.plan import EPISODES_PER_TASK, MAX_SHOTS, ClipJob, TaskPlan, clip, multi_episode, rng, seeded
from acousticbench.benchmarks.audioicl.build.sounds import PERCUSSIVE, frames, percussive, roved_percussive

PAIRS = 40
PATTERNS = tuple("".join(p) for p in itertools.product("AB", repeat=3))
SOUND_S = 0.25
GAP_S = 0.08
PEAK = 0.5


def plan(task: str) -> TaskPlan:
    order = rng(task, "plan")
    clips: dict[str, ClipJob] = {}
    layout = []
    for p in range(PAIRS):
        g = rng(task, "pair", p)
        families = g.choice(PERCUSSIVE, 2, replace=False)  # two clearly different sounds
        sounds = {"A": roved_percussive(g, str(families[0])), "B": roved_percussive(g, str(families[1]))}
        refs = {}
        for role in "AB":
            path = refs[role] = f"data/audioremap/p{p:03d}_{role.lower()}.wav"
            clips[path] = ClipJob(path, "remap", seeded({"sounds": [sounds[role]]}, task, p, role))
        mixes = {}
        for pattern, name in zip(PATTERNS, order.permutation(len(PATTERNS))):
            path = mixes[pattern] = f"data/audioremap/p{p:03d}_m{name}.wav"
            clips[path] = ClipJob(path, "remap", seeded({"sounds": [sounds[r] for r in pattern]}, task, p, pattern))
        layout.append((refs, mixes))
    episodes = []
    for i in range(EPISODES_PER_TASK):
        refs, mixes = layout[i % PAIRS]
        letters = dict(zip("AB", (str(c) for c in order.choice(list(string.ascii_uppercase), 2, replace=False))))
        chosen = [PATTERNS[int(j)] for j in order.choice(len(PATTERNS), MAX_SHOTS + 1, replace=False)]

        def spelled(pattern: str) -> str:
            return "".join(letters[r] for r in pattern)

        head = [clip("A", refs["A"], letters["A"]), clip("B", refs["B"], letters["B"])]
        demos = [head + [clip("MIX", mixes[pat], spelled(pat))] for pat in chosen[:-1]]
        query = head + [clip("MIX", mixes[chosen[-1]], None)]
        episodes.append(multi_episode(task, i, demos, query, spelled(chosen[-1])))
    return TaskPlan(episodes, clips)


def render(params: dict[str, Any], rng_: np.random.Generator) -> np.ndarray:
    """One sound (A or B alone), or several with a short gap: MIX holds the very samples of A and B."""
    gap = np.zeros(frames(GAP_S))
    pieces = []
    for i, sound in enumerate(params["sounds"]):
        pieces += ([gap] if i else []) + [percussive(sound, SOUND_S) * PEAK]
    x = np.concatenate(pieces)
    return x + rng_.standard_normal(x.size) * PEAK * 10 ** (-60 / 20)
