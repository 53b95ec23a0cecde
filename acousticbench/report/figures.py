"""The report's figures as inline SVG (no plotting library, nothing fetched): psychometric panels and k-shot curves."""
from __future__ import annotations

from html import escape

import numpy as np

from acousticbench.benchmarks.acoustic.psychometric import curve
from acousticbench.benchmarks.acoustic.records import PsychometricFit
from acousticbench.report.summaries import Psychometric

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")
PANEL_W, PANEL_H, PAD = 162, 132, 28  # eight attributes side by side in 1,400 px


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _level(value: float, beyond: bool, fit: PsychometricFit) -> str:
    if not beyond:
        return f"{value:.2f}"
    return f"&gt;{max(fit.levels)}" if value >= max(fit.levels) else f"&lt;{min(fit.levels)}"


def physical_text(fit: PsychometricFit | None) -> str | None:
    """'0.71 semitones [0.50, 1.00]', '&lt;0.2 semitones' (still above 75% at the smallest difference tested), or
    None where the questions gave no physical steps."""
    if fit is None or not fit.unit or not fit.steps or None in fit.steps:
        return None
    if fit.threshold is None:
        edge = min(fit.steps) if fit.threshold_side == "above" else max(fit.steps)
        return f"{'&lt;' if fit.threshold_side == 'above' else '&gt;'}{edge:g} {escape(fit.unit)}"
    if fit.threshold_physical is None:
        return None
    ends = fit.threshold_physical_ci95
    interval = f" [{ends[0]:.3g}, {ends[1]:.3g}]" if ends else ""
    return f"{fit.threshold_physical:.3g} {escape(fit.unit)}{interval}"


def threshold_text(fit: PsychometricFit | None) -> str:
    """'0.71 semitones [0.50, 1.00] (level 3.12 [2.71, 3.52])' where the questions give physical steps, else the
    level alone; '&gt;5', or why there is none: the cell text of the threshold table."""
    if fit is None:
        return "-"
    physical = physical_text(fit)
    levels = _level_text(fit)
    return f"{physical} (level {levels})" if physical else levels


def _level_text(fit: PsychometricFit) -> str:
    if fit.threshold is None:
        return f"&gt;{max(fit.levels)}" if fit.threshold_side == "above" else f"&lt;{min(fit.levels)}"
    low, high = fit.threshold_ci95 or (None, None)
    interval = "" if low is None else (f" [{_level(low, fit.threshold_ci95_beyond[0], fit)}, "
                                       f"{_level(high, fit.threshold_ci95_beyond[1], fit)}]")
    return f"{fit.threshold:.2f}{interval}"


class _Axes:
    """Maps data to panel pixels."""

    def __init__(self, x0, x1, y0, y1, w, h, pad=PAD):
        self.x0, self.x1, self.y0, self.y1, self.w, self.h, self.pad = x0, x1, y0, y1, w, h, pad

    def x(self, v: float) -> float:
        return round(self.pad + (v - self.x0) / (self.x1 - self.x0) * (self.w - self.pad - 8), 1)

    def y(self, v: float) -> float:
        return round(self.h - self.pad + 6 - (v - self.y0) / (self.y1 - self.y0) * (self.h - self.pad - 6 - 14), 1)

    def frame(self, xticks, yticks, xlabel: str, xnames: list[str] | None = None) -> str:
        parts = [f'<line class="ax" x1="{self.x(self.x0)}" y1="{self.y(self.y0)}" x2="{self.x(self.x1)}" '
                 f'y2="{self.y(self.y0)}"/>',
                 f'<line class="ax" x1="{self.x(self.x0)}" y1="{self.y(self.y0)}" x2="{self.x(self.x0)}" '
                 f'y2="{self.y(self.y1)}"/>']
        names = xnames or [f"{t:g}" for t in xticks]
        parts += [f'<text class="tick" x="{self.x(t)}" y="{self.y(self.y0) + 11}" text-anchor="middle">{name}</text>'
                  for t, name in zip(xticks, names)]
        parts += [f'<text class="tick" x="{self.x(self.x0) - 3}" y="{self.y(t) + 3}" text-anchor="end">{t:g}</text>'
                  for t in yticks]
        parts.append(f'<text class="tick" x="{self.x((self.x0 + self.x1) / 2)}" y="{self.h - 2}" '
                     f'text-anchor="middle">{escape(xlabel)}</text>')
        return "".join(parts)


def psychometric_panel(cell: Psychometric) -> str:
    """Accuracy by level (Wilson 95% bars), the fitted curve, the 75% line and the threshold with its interval."""
    levels = [p[0] for p in cell.points]
    lowest = min(k / n for _, n, k, _ in cell.points)  # below-chance points stay in view
    ax = _Axes(min(levels) - 0.3, max(levels) + 0.3, min(0.4, np.floor(10 * lowest) / 10), 1.0, PANEL_W, PANEL_H)
    fit = cell.fit
    steps = fit.steps if fit is not None and fit.unit and fit.steps and None not in fit.steps else None
    axis = (f"{fit.unit} (easiest first)", [f"{s:g}" for s in steps]) if steps else ("level (1 easiest)", None)
    parts = [ax.frame(levels, (0.5, 0.75, 1.0), axis[0], axis[1]),
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


def kshot_panel(task: str, models: dict[str, list[tuple]], order: list[str]) -> str:
    """Accuracy against k for every model on one axis (mean over seeds, +- std bars)."""
    w, h = 300, 210
    ks = sorted({p[0] for points in models.values() for p in points})
    ax = _Axes(min(ks) - 0.3, max(ks) + 0.3, 0.0, 1.0, w, h, pad=32)
    parts = [ax.frame(ks, (0, 0.25, 0.5, 0.75, 1.0), "shots (k)")]
    for model, points in models.items():
        c = colour(order.index(model))
        parts.append(f'<polyline class="series" stroke="{c}" points="'
                     + " ".join(f"{ax.x(k)},{ax.y(mean)}" for k, mean, _, _ in points) + '"/>')
        for k, mean, std, seeds in points:
            if std:
                parts.append(f'<line stroke="{c}" x1="{ax.x(k)}" y1="{ax.y(max(0, mean - std))}" x2="{ax.x(k)}" '
                             f'y2="{ax.y(min(1, mean + std))}"/>')
            parts.append(f'<circle fill="{c}" cx="{ax.x(k)}" cy="{ax.y(mean)}" r="3">'
                         f'<title>{escape(model)}, k={k}: {100 * mean:.1f}% ± {100 * std:.1f} ({seeds} seeds)</title>'
                         f'</circle>')
    return (f'<svg class="panel kshot" width="{w}" height="{h}" role="img" data-task="{escape(task)}" '
            f'aria-label="{escape(task)} accuracy by k"><text class="ttl" x="32" y="11">{escape(task)}</text>'
            f'{"".join(parts)}</svg>')


def legend(models: list[str]) -> str:
    return '<div class="legend">' + "".join(
        f'<span><i style="background:{colour(i)}"></i>{escape(m)}</span>' for i, m in enumerate(models)) + "</div>"
