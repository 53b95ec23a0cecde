"""Where an adaptive run's tracks put their next trials, and what their answers say of the threshold: a Bayesian grid
over the 75%-correct threshold, the slope and the lapse rate (the Psi method, Kontsevich & Tyler 1999, with the
Psi-marginal's entropy over the threshold alone, Prins 2013), and a 2-down-1-up staircase as the plain option.

Every difference is handled as its magnitude (the step, or a count ratio's excess over 1) on a log axis; the
psychometric function is the fixed pack's (psychometric.py): P(correct) = 0.5 + (0.5 - lapse) * logistic, with the
threshold where it crosses 75%. The prior is stated in config.json (`adaptive.prior`)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

GUESS, CRITERION = 0.5, 0.75
THRESHOLD_POINTS = 240
SPREADS = tuple(float(s) for s in np.geomspace(0.06, 1.2, 12))  # the logistic's scale on the log axis: steep first
LAPSES = (0.0, 0.02, 0.05, 0.1)
BELOW, ABOVE = 8.0, 4.0  # the threshold prior reaches this far beyond the lowest and the highest stimulus
STAIR_START = 0.85  # a staircase starts this far up its grid (an easy difference)
STAIR_STEP = 2  # grid points per staircase step


@dataclass(frozen=True)
class Grid:
    """The stimuli a track may present (magnitudes, ascending), the threshold values its prior spans, and the slopes
    and lapse rates it weighs (a run weighs them all; the validation may tell it a listener's own)."""

    stimuli: tuple[float, ...]
    spreads: tuple[float, ...] = SPREADS
    lapses: tuple[float, ...] = LAPSES

    @property
    def thresholds(self) -> np.ndarray:
        return np.linspace(np.log(self.stimuli[0] / BELOW), np.log(self.stimuli[-1] * ABOVE), THRESHOLD_POINTS)

    def prior(self) -> dict:
        """The prior as config.json states it."""
        return {"threshold": f"log-uniform over [{self.stimuli[0] / BELOW:.4g}, {self.stimuli[-1] * ABOVE:.4g}] "
                             f"({THRESHOLD_POINTS} points)",
                "spread_ln": [round(s, 4) for s in self.spreads], "lapse": list(self.lapses),
                "spread_and_lapse": "uniform over the listed values", "criterion": CRITERION, "guess": GUESS}


def p_correct(log_x: np.ndarray, log_t: np.ndarray, spread: np.ndarray, lapse: np.ndarray) -> np.ndarray:
    """P(correct) at log magnitude `log_x` for a listener whose curve crosses 75% at `log_t` (all broadcast)."""
    z_t = np.log((CRITERION - GUESS) / (1 - CRITERION - lapse))  # logistic(z_t) * (0.5 - lapse) = 0.25
    z = (log_x - log_t) / spread + z_t
    return GUESS + (1 - GUESS - lapse) * 0.5 * (1 + np.tanh(z / 2))


def _axes(grid: Grid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return grid.thresholds[:, None, None], np.array(grid.spreads)[None, :, None], np.array(grid.lapses)[None, None, :]


@lru_cache(maxsize=16)
def _tables(grid: Grid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P(correct) at every stimulus for every listener of the grid, and its logs for a right and a wrong answer."""
    log_t, spread, lapse = _axes(grid)
    x = np.log(np.array(grid.stimuli))[:, None, None, None]
    p = np.clip(p_correct(x, log_t[None], spread[None], lapse[None]), 1e-12, 1 - 1e-12)
    return p, np.log(p), np.log1p(-p)


class Evidence:
    """The log-likelihood over the grid's listeners of (magnitude, correct) trials, and how many, summed as the trials
    are answered: a round adds its own trials, not every earlier one again, and the sum is the same, bit for bit, as
    over all of them at once. A magnitude off the grid (an older run's) is read from the nearest stimulus."""

    def __init__(self, grid: Grid, trials: Iterable[tuple[float, bool]] = ()):
        self.grid, self.count = grid, 0
        _, self._right, self._wrong = _tables(grid)
        self._log_stimuli = np.log(np.array(grid.stimuli))
        self._log = np.zeros(self._right.shape[1:])
        for magnitude, correct in trials:
            self.add(magnitude, correct)

    def add(self, magnitude: float, correct: bool) -> None:
        i = int(np.argmin(np.abs(self._log_stimuli - np.log(magnitude))))
        self._log += self._right[i] if correct else self._wrong[i]
        self.count += 1

    def __len__(self) -> int:
        return self.count

    def posterior(self) -> np.ndarray:
        """The normalised posterior over (threshold, spread, lapse)."""
        post = np.exp(self._log - self._log.max())
        return post / post.sum()

    def estimate(self) -> Estimate:
        """The threshold's median and 95% interval."""
        return summarise(self.grid, self.posterior())


def posterior(grid: Grid, trials: list[tuple[float, bool]]) -> np.ndarray:
    """The normalised posterior over (threshold, spread, lapse) after (magnitude, correct) trials."""
    return Evidence(grid, trials).posterior()


def _entropy(marginal: np.ndarray) -> np.ndarray:
    m = marginal / marginal.sum(-1, keepdims=True)
    return -(m * np.log(np.where(m > 0, m, 1.0))).sum(-1)


def _expected_entropy(grid: Grid, post: np.ndarray) -> np.ndarray:
    """Per stimulus: the entropy its answer is expected to leave in the threshold's marginal posterior."""
    p = _tables(grid)[0]  # stimuli x threshold x spread x lapse
    joint_right = np.einsum("xtsl,tsl->xt", p, post)
    joint_wrong = post.sum((1, 2))[None] - joint_right
    right = joint_right.sum(1)
    return right * _entropy(joint_right) + (1 - right) * _entropy(joint_wrong)


def psi_round(grid: Grid, pooled: Evidence, own: list[list[tuple[float, bool]]]) -> list[float]:
    """A round's stimuli, one per track: the ones whose answers are expected to leave the least entropy in the
    threshold's marginal posterior over every track's trials so far, best first and distinct (four tracks asking
    the same difference at once would say less than four neighbouring ones)."""
    # rounded: a tie between two stimuli is broken the same way on every machine, not by the last bit of a sum
    order = np.argsort(np.round(_expected_entropy(grid, pooled.posterior()), 9), kind="stable")
    return [grid.stimuli[int(order[k % len(order)])] for k in range(len(own))]


def psi_next(grid: Grid, trials: list[tuple[float, bool]]) -> float:
    """The one stimulus a lone track would ask next."""
    return psi_round(grid, Evidence(grid, trials), [trials])[0]


def staircase_next(grid: Grid, trials: list[tuple[float, bool]]) -> float:
    """2-down-1-up (Levitt 1971): two correct in a row make it harder, one wrong easier; it hovers near 70.7%."""
    index = int(round(STAIR_START * (len(grid.stimuli) - 1)))
    streak = 0
    for magnitude, correct in trials:
        index = grid.stimuli.index(magnitude) if magnitude in grid.stimuli else index
        if not correct:
            index, streak = min(index + STAIR_STEP, len(grid.stimuli) - 1), 0
        elif streak == 1:
            index, streak = max(index - STAIR_STEP, 0), 0
        else:
            streak = 1
    return grid.stimuli[index]


def staircase_round(grid: Grid, pooled: Evidence, own: list[list[tuple[float, bool]]]) -> list[float]:
    """Each track its own staircase (a staircase follows its own answers only)."""
    return [staircase_next(grid, trials) for trials in own]


# a round's placement: (grid, every track's trials of earlier rounds, each track's own) -> a stimulus per track
METHODS = {"psi": psi_round, "staircase": staircase_round}


@dataclass(frozen=True)
class Estimate:
    """The threshold's posterior summary, as magnitudes: median and the central 95% interval."""

    median: float
    low: float
    high: float

    @property
    def width(self) -> float:
        """The interval's high end over its low end (1: a point)."""
        return self.high / self.low


def summarise(grid: Grid, post: np.ndarray) -> Estimate:
    """The threshold's marginal posterior, read at its 2.5, 50 and 97.5 percentiles (interpolated on the grid)."""
    cdf = np.cumsum(post.sum((1, 2)))
    low, median, high = (float(np.exp(np.interp(q, cdf, grid.thresholds))) for q in (0.025, 0.5, 0.975))
    return Estimate(median, low, high)


def estimate(grid: Grid, trials: list[tuple[float, bool]]) -> Estimate:
    """The threshold's median and 95% interval after (magnitude, correct) trials on the grid's stimuli."""
    return Evidence(grid, trials).estimate()


def estimate_of_counts(grid: Grid, counts: dict[float, tuple[int, int]]) -> Estimate:
    """The same posterior summary for (asked, right) answers at any magnitudes (the fixed pack's steps), so the
    pack's threshold can be read with the very method and prior of an adaptive run's."""
    log_t, spread, lapse = _axes(grid)
    log_post = np.zeros(np.broadcast_shapes(log_t.shape, spread.shape, lapse.shape))
    for magnitude, (asked, right) in sorted(counts.items()):
        p = np.clip(p_correct(np.log(magnitude), log_t, spread, lapse), 1e-12, 1 - 1e-12)
        log_post += right * np.log(p) + (asked - right) * np.log1p(-p)
    post = np.exp(log_post - log_post.max())
    return summarise(grid, post / post.sum())
