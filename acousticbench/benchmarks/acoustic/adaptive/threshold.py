"""An adaptive run's threshold in the task's unit: the posterior over every track's placed trials at once, its median
and 95% interval, each track's path for the report, and the fitted curve."""
from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from acousticbench.benchmarks.acoustic.adaptive.procedure import CRITERION, Grid, p_correct, posterior, summarise, _axes
from acousticbench.benchmarks.acoustic.adaptive.stimuli import difference, grid_of
from acousticbench.benchmarks.acoustic.stimuli import ATTRIBUTES
from acousticbench.core.records import Frozen

CURVE_POINTS = 25


class Track(Frozen):
    """One track's trials in order: the difference it presented and whether the answer was right."""

    track: int
    differences: list[float]
    correct: list[bool]


class AdaptiveThreshold(Frozen):
    """metrics.json's `adaptive`: the 75%-correct threshold an adaptive run measured, in the task's unit."""

    method: str = Field(description="psi or staircase: how each track placed its trials.")
    unit: str
    criterion: float = CRITERION
    trials: int = Field(description="Placed trials over all tracks (answers that are not an option count as wrong).")
    catch_trials: int = Field(description="Catch trials at the task's catch difference (diagnostic, not fitted).")
    catch_correct: int
    threshold: float | None = Field(description="The posterior median of the threshold; null when not reached.")
    ci95: list[float] | None = Field(description="The central 95% interval of the threshold's posterior.")
    reached: bool = Field(description="False when the posterior median lies above the largest difference a track "
                          "may present: the listener did not reach 75% correct within the task's range.")
    note: str | None = None
    lowest: float = Field(description="The smallest difference a track may present.")
    highest: float = Field(description="The largest difference a track may present.")
    pack_hardest: float = Field(description="The fixed pack's hardest step, for comparison.")
    tracks: list[Track]
    curve: list[list[float]] = Field(description="[difference, P(correct)] of the posterior-mean curve.")


def threshold_text(found: AdaptiveThreshold | dict[str, Any]) -> str | None:
    """'0.42 semitones [0.31, 0.57]' (posterior median [95% interval]), as every view of an adaptive run writes it,
    or 'below 0.025 semitones (every difference asked)'; None when the threshold was not reached."""
    data = found if isinstance(found, dict) else found.model_dump()
    if not data["reached"]:
        return None
    low, high = data["ci95"]
    if high < data["lowest"]:  # every difference asked was heard: the interval is the prior's, not a measurement
        return f"below {data['lowest']:.3g} {data['unit']} (every difference asked)"
    return f"{data['threshold']:.3g} {data['unit']} [{low:.3g}, {high:.3g}]"


def _fitted_curve(code: str, grid: Grid, post: np.ndarray) -> list[list[float]]:
    log_t, spread, lapse = _axes(grid)
    points = np.geomspace(grid.stimuli[0], grid.stimuli[-1], CURVE_POINTS)
    return [[round(difference(code, float(x)), 6),
             round(float((post * p_correct(np.log(x), log_t, spread, lapse)).sum()), 4)] for x in points]


def adaptive_threshold(code: str, method: str, records: list[Any]) -> AdaptiveThreshold:
    """The run's threshold from its records (each with meta.adaptive)."""
    return measured(code, method, records)[0]


def measured(code: str, method: str, records: list[Any]) -> tuple[AdaptiveThreshold, np.ndarray]:
    """The run's threshold from its records, and the threshold's marginal posterior on the task's grid."""
    from acousticbench.benchmarks.acoustic.adaptive.tracks import placed

    grid, module = grid_of(code), ATTRIBUTES[code]
    ours = [r for r in records if isinstance(r.meta.get("adaptive"), dict)]
    trials = placed(ours)
    catch = [r for r in ours if r.meta.get("probe") == "catch" and r.status != "error"]
    tracks = []
    for number in sorted({r.meta["adaptive"]["track"] for r in ours}):
        mine = placed([r for r in ours if r.meta["adaptive"]["track"] == number])
        tracks.append(Track(track=number, differences=[difference(code, m) for m, _ in mine],
                            correct=[c for _, c in mine]))
    lowest, highest = difference(code, grid.stimuli[0]), difference(code, grid.stimuli[-1])
    post = posterior(grid, trials)
    found = summarise(grid, post)
    median, low, high = (difference(code, v) for v in (found.median, found.low, found.high))
    reached = bool(trials) and median <= highest
    note = None
    if not trials:
        note = "no answered trials"
    elif not reached:
        note = f"not reached: under {CRITERION:.0%} correct up to the largest difference, {highest:g} {module.UNIT}"
    elif high < lowest:
        note = f"below the smallest difference presented ({lowest:g} {module.UNIT}): the interval is the prior's"
    return AdaptiveThreshold(
        method=method, unit=module.UNIT, trials=len(trials), catch_trials=len(catch),
        catch_correct=sum(1 for r in catch if r.correct is True),
        threshold=round(median, 6) if reached else None, ci95=[round(low, 6), round(high, 6)] if reached else None,
        reached=reached, note=note, lowest=lowest, highest=highest, pack_hardest=module.STEPS[-1], tracks=tracks,
        curve=_fitted_curve(code, grid, post)), post.sum((1, 2))
