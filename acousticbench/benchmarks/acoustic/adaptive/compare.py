"""Two adaptive runs of one task compared by what they measured: no trial of one is a trial of the other (each was
placed by its own run's answers), so their answers never pair; their thresholds do. Each run's threshold posterior is
over its own trials alone, so the two are independent: the ratio of the thresholds has the distribution of their log
difference, the two marginals convolved on the grid's even log axis, and P(A's is the lower) is read from it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from acousticbench.benchmarks.acoustic.adaptive.stimuli import grid_of, is_count
from acousticbench.benchmarks.acoustic.adaptive.threshold import (AdaptiveThreshold, beyond_asked, measured,
                                                                  threshold_text)


@dataclass(frozen=True)
class ThresholdComparison:
    """A's and B's thresholds, B's over A's (posterior median and central 95% interval) and P(A's is the lower)."""

    task: str
    a: AdaptiveThreshold
    b: AdaptiveThreshold
    ratio: tuple[float, float, float]  # median, 2.5 and 97.5 percentiles of B's threshold over A's
    a_lower: float

    def lines(self, name_a: str, name_b: str, one_run_each: bool = True) -> list[str]:
        """What `acousticbench compare` prints for two adaptive runs."""
        over = "B's threshold over A's" + (" (each as its count ratio's excess over 1)" if is_count(self.task) else "")
        median, low, high = self.ratio
        unmeasured = [(side, why) for side, found in (("A", self.a), ("B", self.b)) if (why := _unmeasured(found))]
        whys = "; ".join(f"{side}'s {why}" for side, (_, why) in unmeasured)
        ratio = f"not measured ({whys})" if unmeasured else f"{median:.3g} [95% interval {low:.3g}, {high:.3g}]"
        past = [side for side, found in (("A", self.a), ("B", self.b)) if found.ci95 and (
            found.ci95[0] < found.lowest or found.ci95[1] > found.highest)]
        if past and not unmeasured:  # an end drawn from the prior beyond what a track may present: said, not hidden
            ratio += (f" (the interval of {' and '.join(past)} reaches past the differences a track may present, so "
                      "this interval's ends lean on the prior there)")
        # both beyond what they asked on one side (two Oracles below every difference): their order is the prior's
        lower = "not measured" if len(unmeasured) == 2 and unmeasured[0][1][0] == unmeasured[1][1][0] else \
            f"{self.a_lower:.3f}"
        return [f"Thresholds at {self.a.criterion:.0%} correct on {self.task}, each the posterior median "
                "[95% interval] over its own run's trials (adaptive runs: each placed its own trials from its own "
                "answers, so no answer pairs with the other's; the two posteriors are independent):",
                f"  A: {_threshold(self.a)}", f"  B: {_threshold(self.b)}",
                f"{over}: {ratio}; P(A's threshold is the lower) = {lower}", f"A: {name_a}", f"B: {name_b}"]


def _unmeasured(found: AdaptiveThreshold) -> tuple[str, str] | None:
    """Why a run's threshold bounds no ratio (its figure is its prior's edge, not its answers'), with the side it lies
    on; None where it was measured."""
    if not found.reached:
        return "above", "was not reached"
    side = beyond_asked(found)
    return None if side is None else (side, f"lies {side} every difference its run asked")


def _threshold(found: AdaptiveThreshold) -> str:
    method = f"{found.method}, {found.trials} trials"
    return f"{threshold_text(found) or found.note} ({method})"


def _planned(adaptive: dict[str, Any]) -> int | None:
    tracks, trials = adaptive.get("tracks"), adaptive.get("trials_per_track")
    return tracks * trials if tracks and trials else None


def compare_thresholds(task: str, a: tuple[dict[str, Any], list],
                       b: tuple[dict[str, Any], list]) -> ThresholdComparison:
    """Each side as (its config.json, its records)."""
    grid = grid_of(task)
    found, marginals = zip(*(measured(task, config["adaptive"]["method"], records, _planned(config["adaptive"]))
                             for config, records in (a, b)))
    n = len(grid.thresholds)
    spread = np.convolve(marginals[1], marginals[0][::-1])  # index k: B's grid point minus A's, plus n - 1
    logs = (np.arange(len(spread)) - (n - 1)) * (grid.thresholds[1] - grid.thresholds[0])
    cdf = np.cumsum(spread)
    median, low, high = (float(np.exp(np.interp(q, cdf, logs))) for q in (0.5, 0.025, 0.975))
    a_lower = float(spread[n:].sum() + 0.5 * spread[n - 1])
    return ThresholdComparison(task, found[0], found[1], (median, low, high), a_lower)
