"""AudioOperator(Hard): spoken digits with sound effects standing for arithmetic operators, one rule per sound effect."""
from __future__ import annotations

from typing import Any

import numpy as np

from acousticbench.benchmarks.audioicl.build.plan import EPISODES_PER_TASK, MAX_SHOTS, ClipJob, TaskPlan, rng, seeded, single_episode
from acousticbench.benchmarks.audioicl.build.sounds import SFX, frames, roved_sfx, sfx

OPS = ("add", "sub", "mul")
SYMBOL = {"add": "+", "sub": "-", "mul": "*"}
EASY_SFX, HARD_PAIRS = 40, 24  # sound effects (easy) or pairs of them (hard); episodes share them
CLIPS_PER_SFX = 8
GAP_S = 0.18  # silence between spoken digit and sound effect
SFX_PEAK = 0.4


def evaluate(digits: list[int], ops: list[str]) -> int:
    """The value with the usual precedence: multiplication first, then left to right."""
    return int(eval("".join(f"{d}{SYMBOL[o]}" for d, o in zip(digits, ops)) + str(digits[-1])))  # noqa: S307 (digits and fixed symbols)


def easy_expression(g: np.random.Generator, op: str) -> list[int]:
    while True:
        a, b = (int(v) for v in g.integers(1, 10, 2))
        if op == "sub" and a < b:
            a, b = b, a
        if (a, b) != (2, 2):  # 2+2 = 2*2: one demo would not tell the operators apart
            return [a, b]


def plan(task: str) -> TaskPlan:
    hard = task.endswith("Hard")
    folder = f"data/audiooperator/{'hard' if hard else 'easy'}"
    order = rng(task, "plan")
    pairs = [(a, b) for a in OPS for b in OPS if a != b]
    clips: dict[str, ClipJob] = {}
    sets: list[list[tuple[str, str]]] = []
    for s in range(HARD_PAIRS if hard else EASY_SFX):
        g = rng(task, "sfx", s)
        families = g.choice(SFX, 2, replace=False) if hard else [SFX[s % len(SFX)]]
        effects = [roved_sfx(g, str(f)) for f in families]
        ops = list(pairs[s % len(pairs)]) if hard else [OPS[s % len(OPS)]]
        shots = []
        for j, name in enumerate(order.permutation(CLIPS_PER_SFX)):
            digits, slots = _expression(g, ops, hard)
            voices = [int(v) for v in g.integers(0, 3, len(digits))]
            path = f"{folder}/x{s:03d}_{name}.wav"
            params = {"digits": digits, "voices": voices, "effects": [effects[k] for k in slots]}
            clips[path] = ClipJob(path, "operator", seeded(params, task, s, j))
            shots.append((path, str(evaluate(digits, [ops[k] for k in slots]))))
        sets.append(shots)
    episodes = []
    for i in range(EPISODES_PER_TASK):
        shots = sets[i % len(sets)]
        picked = order.choice(len(shots), MAX_SHOTS + 1, replace=False)
        episodes.append(single_episode(task, i, [shots[int(p)] for p in picked]))
    return TaskPlan(episodes, clips)


def _expression(g: np.random.Generator, ops: list[str], hard: bool) -> tuple[list[int], list[int]]:
    """Digits and which of the set's sound effects (0/1) stands between each pair of them."""
    if not hard:
        return easy_expression(g, ops[0]), [0]
    return [int(v) for v in g.integers(1, 10, 3)], [int(v) for v in g.permutation(2)]


def render(params: dict[str, Any], rng_: np.random.Generator) -> np.ndarray:
    from acousticbench.benchmarks.audioicl.build.speech import digit

    gap = np.zeros(frames(GAP_S))
    pieces = [np.zeros(frames(0.1))]
    for i, (d, v) in enumerate(zip(params["digits"], params["voices"])):
        if i:
            pieces += [gap, sfx(params["effects"][i - 1]) * SFX_PEAK, gap]
        pieces.append(digit(d, v))
    pieces.append(np.zeros(frames(0.1)))
    x = np.concatenate(pieces)
    return x + rng_.standard_normal(x.size) * 0.5 * 10 ** (-60 / 20)  # a faint noise floor
