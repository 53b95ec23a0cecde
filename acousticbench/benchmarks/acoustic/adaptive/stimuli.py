"""One adaptive trial made on demand by its task's own generator: the difference the procedure chose, the rest roved
as in the pack, its clips written with their sha256, everything drawn from (seed, task, track, trial) alone."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from acousticbench.benchmarks.acoustic.adaptive.procedure import Grid
from acousticbench.benchmarks.acoustic.records import Choice, Question
from acousticbench.benchmarks.acoustic.stimuli import ATTRIBUTES, counting
from acousticbench.benchmarks.acoustic.stimuli.sources import roved_event
from acousticbench.benchmarks.acoustic.stimuli.trial import Trial
from acousticbench.benchmarks.acoustic.tasks import TASKS
from acousticbench.core.audio import SAMPLE_RATE, write_wav

ADAPTIVE_KEY = 0xADA97  # apart from the pack's BUILD_SEED: an adaptive stimulus never repeats one of the pack's
CATCH_EVERY = 20  # one trial in twenty of a track is a catch trial at the catch difference (the pack: 25 in 475)
CATCH_AT = 4  # its place in each block of twenty: not the first, which a track asks before it knows anything
STIMULI = 40  # differences a continuous task's grid offers, log-spaced
BELOW_HARDEST = 8.0  # the grid reaches this many times below the pack's hardest step
MOST_EVENTS = 12  # counting pairs: up to this many bursts (the pack's reach 10)


def is_count(code: str) -> bool:
    return code == "cnt"


@lru_cache(maxsize=None)
def count_pairs() -> dict[float, tuple[tuple[int, int], ...]]:
    """Every count ratio of two counts from 2 to MOST_EVENTS (up to the catch ratio), as its excess over 1: the pairs
    that make it."""
    pairs: dict[float, list[tuple[int, int]]] = {}
    for low in range(2, MOST_EVENTS):
        for high in range(low + 1, MOST_EVENTS + 1):
            if high / low <= counting.CATCH_STEP:
                pairs.setdefault(round(high / low - 1, 9), []).append((low, high))
    return {excess: tuple(found) for excess, found in sorted(pairs.items())}


@lru_cache(maxsize=None)
def grid_of(code: str) -> Grid:
    """The magnitudes a track of `code` may present: its difference on a log axis (a count ratio's excess over 1),
    from BELOW_HARDEST times under the pack's hardest step up to its catch difference."""
    if is_count(code):
        return Grid(tuple(count_pairs()))
    module = ATTRIBUTES[code]
    top = max(module.CATCH_STEP, module.STEPS[0])
    return Grid(tuple(float(round(x, 6)) for x in np.geomspace(module.STEPS[-1] / BELOW_HARDEST, top, STIMULI)))


def difference(code: str, magnitude: float) -> float:
    """A magnitude in the task's own unit (a count ratio is 1 + its excess)."""
    return 1.0 + magnitude if is_count(code) else magnitude


def magnitude_of(code: str, difference_: float) -> float:
    return difference_ - 1.0 if is_count(code) else difference_


def trial_rng(seed: int, code: str, track: int, trial: int, part: int = 0) -> np.random.Generator:
    """An independent generator per (seed, task, track, trial): the stimulus never depends on another track's timing."""
    task_key = int.from_bytes(code.encode("ascii"), "big")
    return np.random.default_rng(np.random.SeedSequence([ADAPTIVE_KEY, seed, task_key, track, trial, part]))


def is_catch(trial: int) -> bool:
    return trial % CATCH_EVERY == CATCH_AT


def answer_of(seed: int, code: str, track: int, trial: int) -> Choice:
    """A then B or B then A, drawn per pair of trials: every two trials of a track hold one of each, whatever the
    answers were."""
    order = trial_rng(seed, code, track, trial // 2, part=1).permutation(2)
    return "AB"[int(order[trial % 2])]  # type: ignore[return-value]


def generated(code: str, rng: np.random.Generator, magnitude: float, answer: Choice) -> Trial:
    """The task's generator at this magnitude; counting picks one of the pairs that make its ratio."""
    module = ATTRIBUTES[code]
    if not is_count(code):
        return module.trial(rng, difference(code, magnitude), answer)
    params = roved_event(rng)
    pairs = count_pairs()[magnitude]
    low, high = pairs[int(rng.integers(len(pairs)))]
    return counting.counted(rng, params, low, high, answer)


@dataclass(frozen=True)
class TrialPlace:
    """Which trial a question is: its run's seed, its task, its track and its index there, and the method asking."""

    seed: int
    code: str
    track: int
    trial: int
    method: str

    @property
    def qid(self) -> str:
        return f"{self.code}_t{self.track:02d}_{self.trial:04d}"


def made(place: TrialPlace, magnitude: float | None) -> tuple[Trial, float, Choice]:
    """One trial's clips (before PCM16), the difference they pose and the answer; a catch trial's is the task's catch
    difference, whatever `magnitude` says."""
    code, module = place.code, ATTRIBUTES[place.code]
    answer = answer_of(place.seed, code, place.track, place.trial)
    rng = trial_rng(place.seed, code, place.track, place.trial)
    if is_catch(place.trial) or magnitude is None:
        return module.trial(rng, module.CATCH_STEP, answer), module.CATCH_STEP, answer
    return generated(code, rng, magnitude, answer), difference(code, magnitude), answer


def make_question(root: Path, place: TrialPlace, magnitude: float | None) -> Question:
    """Generate, write (under `root`, the run's own pack) and describe one trial; a catch trial ignores `magnitude`."""
    code, module = place.code, ATTRIBUTES[place.code]
    catch = is_catch(place.trial)
    trial, step, answer = made(place, magnitude)
    audio, sha256 = [], {}
    for k, clip in enumerate(trial.clips, 1):
        rel = f"{code}/audio/{place.qid}_{k}.wav"
        write_wav(root / rel, clip, SAMPLE_RATE)
        audio.append(rel)
        sha256[rel] = hashlib.sha256((root / rel).read_bytes()).hexdigest()
    meta = {"attribute": module.ATTRIBUTE, "level": None, "probe": "catch" if catch else None, "twin_of": None,
            "step": step, "unit": module.UNIT, "clips": list(trial.clip_params), "shared": trial.shared,
            "adaptive": {"method": place.method, "track": place.track, "trial": place.trial,
                         "magnitude": None if catch else magnitude}}
    return Question(id=place.qid, task=code, split="eval", kind="diagnostic" if catch else "scored",
                    prompt=TASKS[code].prompt(), audio=audio, answer=answer, meta=meta, sha256=sha256).sealed()
