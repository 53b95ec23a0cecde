"""Simulated listeners of known threshold, slope, lapse rate and response bias that hear the clips themselves: each
measures the attribute from the waveforms with the Oracle's measurement (never a question's key), turns the
measured difference into the task's unit, and hears it with the probability its psychometric function gives.
bench/bench_adaptive.py and the tests check the adaptive thresholds against them."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from acousticbench.benchmarks.acoustic.adaptive.procedure import CRITERION, GUESS, METHODS, Estimate, Evidence, Grid
from acousticbench.benchmarks.acoustic.adaptive.stimuli import TrialPlace, grid_of, is_catch, magnitude_of, made
from acousticbench.benchmarks.acoustic.stimuli import ATTRIBUTES, direction
from acousticbench.core.audio import SAMPLE_RATE, to_pcm16



@lru_cache(maxsize=1)
def _lateral_table() -> tuple[np.ndarray, np.ndarray]:
    """direction.measure's lateralisation index against azimuth (0-90 degrees), to read an azimuth back."""
    azimuths = np.linspace(0.0, 90.0, 9001)
    index = np.array([direction.cues(a)[1] / direction.ILD_MAX_DB + direction.cues(a)[0] / direction.ITD_MAX_S
                      for a in azimuths])
    return index, azimuths


def measured_difference(code: str, clips: list[np.ndarray]) -> float:
    """The difference the clips pose, measured, in the task's unit: positive when "A" is right (the first clip has
    more; for direction, the sound is on the left), 0 when nothing could be measured."""
    values = [ATTRIBUTES[code].measure(clip, SAMPLE_RATE) for clip in clips]
    if code == "dir":
        index, azimuths = _lateral_table()
        return float(np.sign(values[0]) * np.interp(abs(values[0]), index, azimuths))
    first, second = values
    if code == "lou":
        return first - second
    if first <= 0 or second <= 0:
        return 0.0
    if code == "pit":
        return float(12 * np.log2(first / second))
    ratio = max(first, second) / min(first, second)
    size = ratio if code == "cnt" else 100 * (ratio - 1)
    return float(np.sign(first - second) * size)


@dataclass(frozen=True)
class Listener:
    """A listener whose P(correct) crosses 75% at `threshold` (the task's unit; None: never hears anything), with a
    logistic of scale `spread` on the log magnitude; it lapses (guesses) on `lapse` of trials, and a guess is "A" with
    probability `bias`."""

    threshold: float | None
    spread: float = 0.3
    lapse: float = 0.0
    bias: float = 0.5

    def p_hear(self, code: str, measured: float) -> float:
        """The chance it hears a measured difference; P(correct) = 0.5 + (0.5 - lapse / 2) * this."""
        magnitude = magnitude_of(code, abs(measured))
        if self.threshold is None or magnitude <= 0:
            return 0.0
        ceiling = 1 - GUESS - self.lapse / 2
        z_t = np.log((CRITERION - GUESS) / (ceiling - (CRITERION - GUESS)))
        z = (np.log(magnitude) - np.log(magnitude_of(code, self.threshold))) / self.spread + z_t
        return float(1 / (1 + np.exp(-z)))

    def answer(self, code: str, clips: list[np.ndarray], rng: np.random.Generator) -> str:
        measured = measured_difference(code, clips)
        heard = rng.random() >= self.lapse and rng.random() < self.p_hear(code, measured)
        if heard and measured != 0:
            return "A" if measured > 0 else "B"
        return "A" if rng.random() < self.bias else "B"


def heard(clips) -> list[np.ndarray]:
    """The clips as a model gets them: PCM16, read back as floats."""
    return [to_pcm16(c).astype(np.float64) / 32768.0 for c in clips]


def simulated_run(code: str, seed: int, listener: Listener | None, tracks: int, trials: int, method: str = "psi",
                  grid: Grid | None = None) -> tuple[Estimate, list[tuple[int, Estimate]], int]:
    """Tracks asked in rounds as a run asks them, on the task's grid or on `grid` (the same stimuli, told other
    slopes and lapse rates). `listener` None: the Oracle's rule (the sign of the measured difference). Returns the
    final estimate, (requests so far, the run's estimate) after each placed trial, and the requests made."""
    grid, place_round = grid or grid_of(code), METHODS[method]
    own: list[list[tuple[float, bool]]] = [[] for _ in range(tracks)]
    pooled = Evidence(grid)
    path, requests = [], 0
    for index in range(trials):
        magnitudes = [None] * tracks if is_catch(index) else place_round(grid, pooled, own)
        for track, magnitude in enumerate(magnitudes):
            trial, _, answer = made(TrialPlace(seed, code, track, index, method), magnitude)
            rng = np.random.default_rng([seed, track, index, 99])
            clips = heard(trial.clips)
            if listener is None:
                measured = measured_difference(code, clips)
                chosen = ("A" if measured > 0 else "B") if measured else "AB"[int(rng.integers(2))]
            else:
                chosen = listener.answer(code, clips, rng)
            requests += 1
            if magnitude is not None:
                own[track].append((magnitude, chosen == answer))
                pooled.add(magnitude, chosen == answer)
                path.append((requests, pooled.estimate()))
    return pooled.estimate(), path, requests
