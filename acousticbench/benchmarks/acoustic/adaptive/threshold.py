"""An adaptive run's threshold in the task's unit: the posterior over every track's placed trials at once, its median
and 95% interval, each track's path for the report, and the fitted curve."""
from __future__ import annotations

from typing import Any, Literal

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
    asked: list[float] | None = Field(default=None, description="[smallest, largest] difference the tracks asked: a "
                                      "threshold outside them is the prior's edge, written 'below' or 'above' them.")
    requests: int | None = Field(default=None, description="The requests the run made, catch trials included.")
    planned: int | None = Field(default=None, description="The most it could make: tracks x trials per track.")
    stopped_by: Literal["trials", "width"] | None = Field(default=None, description="What ended it: every track "
                                                          "reached its trial count, or --adaptive-width was met.")
    tracks: list[Track]
    curve: list[list[float]] = Field(description="[difference, P(correct)] of the posterior-mean curve.")


def threshold_text(found: AdaptiveThreshold | dict[str, Any]) -> str | None:
    """'0.42 semitones [0.31, 0.57]' (posterior median [95% interval]), as every view of an adaptive run writes it;
    'below 0.025 semitones (every difference asked)' where the median lies outside every difference the run asked
    (the prior's edge, not a measurement), and an interval's end past the differences a track may present as '<' or
    '>' them; None when the threshold was not reached."""
    data = found if isinstance(found, dict) else found.model_dump()
    if not data["reached"]:
        return None
    side, unit = beyond_asked(data), data["unit"]
    if side is not None:
        edge = _asked(data)[0 if side == "below" else 1]
        return f"{side} {edge:.3g} {unit} (every difference asked)"
    low, high = data["ci95"]
    low_text = f"<{data['lowest']:.3g}" if low < data["lowest"] else f"{low:.3g}"
    high_text = f">{data['highest']:.3g}" if high > data["highest"] else f"{high:.3g}"
    return f"{data['threshold']:.3g} {unit} [{low_text}, {high_text}]"


def beyond_asked(found: AdaptiveThreshold | dict[str, Any]) -> Literal["below", "above"] | None:
    """Where a reached threshold's median lies outside every difference the run asked; None among them."""
    data = found if isinstance(found, dict) else found.model_dump()
    if not data["reached"]:
        return None
    low, high = _asked(data)
    return "below" if data["threshold"] < low else "above" if data["threshold"] > high else None


def _asked(data: dict[str, Any]) -> list[float]:
    return data.get("asked") or [data["lowest"], data["highest"]]  # files written before `asked`: the whole range


def _fitted_curve(code: str, grid: Grid, post: np.ndarray) -> list[list[float]]:
    log_t, spread, lapse = _axes(grid)
    points = np.geomspace(grid.stimuli[0], grid.stimuli[-1], CURVE_POINTS)
    return [[round(difference(code, float(x)), 6),
             round(float((post * p_correct(np.log(x), log_t, spread, lapse)).sum()), 4)] for x in points]


def adaptive_threshold(code: str, method: str, records: list[Any], planned: int | None = None) -> AdaptiveThreshold:
    """The run's threshold from its records (each with meta.adaptive); `planned`: its tracks x trials per track."""
    return measured(code, method, records, planned)[0]


def measured(code: str, method: str, records: list[Any],
             planned: int | None = None) -> tuple[AdaptiveThreshold, np.ndarray]:
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
    asked = [difference(code, min(m for m, _ in trials)), difference(code, max(m for m, _ in trials))] if trials \
        else None
    note = None
    if not trials:
        note = "no answered trials"
    elif not reached:
        note = f"not reached: under {CRITERION:.0%} correct up to the largest difference, {highest:g} {module.UNIT}"
    elif median < asked[0]:
        note = f"below the smallest difference asked ({asked[0]:g} {module.UNIT}): the interval is the prior's"
    elif median > asked[1]:
        note = f"above the largest difference asked ({asked[1]:g} {module.UNIT}): the interval is the prior's"
    stopped_by = None if planned is None else "trials" if len(ours) >= planned else "width"
    return AdaptiveThreshold(
        method=method, unit=module.UNIT, trials=len(trials), catch_trials=len(catch),
        catch_correct=sum(1 for r in catch if r.correct is True),
        threshold=round(median, 6) if reached else None, ci95=[round(low, 6), round(high, 6)] if reached else None,
        reached=reached, note=note, lowest=lowest, highest=highest, pack_hardest=module.STEPS[-1], asked=asked,
        requests=len(ours), planned=planned, stopped_by=stopped_by, tracks=tracks,
        curve=_fitted_curve(code, grid, post)), post.sum((1, 2))
