"""AcousticBench's report figures as inline SVG (no plotting library, nothing fetched): a psychometric panel per
model and attribute."""
from __future__ import annotations

from html import escape

import numpy as np

from acousticbench.benchmarks.acoustic.metrics.psychometric import curve
from acousticbench.benchmarks.acoustic.views.summaries import Psychometric
from acousticbench.benchmarks.acoustic.records import PsychometricFit
from acousticbench.core.tables import Axes

PANEL_W, PANEL_H = 162, 132  # eight attributes side by side in 1,400 px


def _level(value: float, beyond: bool, fit: PsychometricFit) -> str:
    if not beyond:
        return f"{value:.2f}"
    return f"&gt;{max(fit.levels)}" if value >= max(fit.levels) else f"&lt;{min(fit.levels)}"


def physical_text(fit: PsychometricFit | None) -> str | None:
    """'0.71 semitones [0.5, 1]', '&lt;0.2 semitones' (still above 75% at the smallest difference tested), or None
    where the questions gave no physical steps."""
    if fit is None or not fit.unit or not fit.steps or None in fit.steps:
        return None
    interval = f" {escape(text)}" if (text := fit.interval_text(physical=True)) else ""
    if fit.threshold is None:
        edge = min(fit.steps) if fit.threshold_side == "above" else max(fit.steps)
        return f"{'&lt;' if fit.threshold_side == 'above' else '&gt;'}{edge:g} {escape(fit.unit)}{interval}"
    if fit.threshold_physical is None:
        return None
    return f"{fit.threshold_physical:.3g} {escape(fit.unit)}{interval}"


def threshold_text(fit: PsychometricFit | None) -> str:
    """'0.71 semitones [0.5, 1] (level 3.12 [2.71, 3.52])' where the questions give physical steps, else the level
    alone: '3.12 [2.71, 3.52]', '&gt;5', or why there is none: the cell text of the threshold table."""
    if fit is None:
        return "-"
    physical = physical_text(fit)
    return f"{physical} (level {_level_text(fit)})" if physical else _level_text(fit)


def _level_text(fit: PsychometricFit) -> str:
    if fit.threshold is None:
        interval = f" {escape(text)}" if (text := fit.interval_text(physical=False)) else ""
        return (f"&gt;{max(fit.levels)}" if fit.threshold_side == "above" else f"&lt;{min(fit.levels)}") + interval
    low, high = fit.threshold_ci95 or (None, None)
    interval = "" if low is None else (f" [{_level(low, fit.threshold_ci95_beyond[0], fit)}, "
                                       f"{_level(high, fit.threshold_ci95_beyond[1], fit)}]")
    return f"{fit.threshold:.2f}{interval}"


def psychometric_panel(cell: Psychometric) -> str:
    """Accuracy by level (95% bars: summaries.Psychometric.points), the fitted curve, the 75% line and the threshold with its interval."""
    levels = [p[0] for p in cell.points]
    lowest = min(k / n for _, n, k, _ in cell.points)  # below-chance points stay in view
    ax = Axes(min(levels) - 0.3, max(levels) + 0.3, min(0.4, np.floor(10 * lowest) / 10), 1.0, PANEL_W, PANEL_H)
    fit = cell.fit
    steps = fit.steps if fit is not None and fit.unit and fit.steps and None not in fit.steps else None
    axis = (f"{fit.unit} (easiest first)", [f"{s:g}" for s in steps]) if steps else ("level (1 easiest)", None)
    parts = [ax.frame(levels, (0.5, 0.75, 1.0), *axis),
             f'<line class="crit" x1="{ax.x(ax.x0)}" y1="{ax.y(0.75)}" x2="{ax.x(ax.x1)}" y2="{ax.y(0.75)}"/>']
    if fit is not None:
        xs = np.linspace(min(levels), max(levels), 40)
        ys = np.clip(curve(xs, fit.midpoint, fit.spread, fit.lapse), ax.y0, ax.y1)
        parts.append('<polyline class="fit" points="' + " ".join(f"{ax.x(a)},{ax.y(b)}" for a, b in zip(xs, ys)) + '"/>')
        if fit.threshold_ci95:
            low, high = fit.threshold_ci95
            parts.append(f'<line class="ci" x1="{ax.x(low)}" y1="{ax.y(0.75)}" x2="{ax.x(high)}" y2="{ax.y(0.75)}"/>')
        if fit.threshold is not None:
            parts.append(f'<circle class="thr" cx="{ax.x(fit.threshold)}" cy="{ax.y(0.75)}" r="3.5"/>')
    for level, n, k, ci in cell.points:
        if ci is not None:
            parts.append(f'<line class="bar" x1="{ax.x(level)}" y1="{ax.y(max(ci.low, ax.y0))}" x2="{ax.x(level)}" '
                         f'y2="{ax.y(ci.high)}"/>')
        parts.append(f'<circle class="pt" cx="{ax.x(level)}" cy="{ax.y(k / n)}" r="2.8">'
                     f'<title>level {level}: {k:g}/{n} correct (mean over seeds)</title></circle>')
    title = f"{escape(cell.task)}: {physical_text(fit) or threshold_text(fit)}"
    return (f'<svg class="panel psy" width="{PANEL_W}" height="{PANEL_H}" role="img" '
            f'data-model="{escape(cell.row)}" data-task="{escape(cell.task)}" '
            f'aria-label="{escape(cell.row)} on {escape(cell.task)}">'
            f'<text class="ttl" x="4" y="11">{title}</text>{"".join(parts)}</svg>')


def psychometric_grid(cells: list[Psychometric], human: set[str] = frozenset()) -> str:
    """A row of panels per model; a human listener's row (`human`: their row labels) beside the models', marked."""
    rows: dict[str, list] = {}
    for cell in cells:
        rows.setdefault(cell.row, []).append(cell)
    return "".join(f'<div class="model-row{" human" if row in human else ""}"><h3>{escape(row)}'
                   + (' <small class="human">human listener</small>' if row in human else "")
                   + '</h3><div class="grid">' + "".join(psychometric_panel(c) for c in panels) + "</div></div>"
                   for row, panels in rows.items())
