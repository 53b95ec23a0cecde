"""The report's section on adaptive runs: each run's threshold beside the fixed pack's for the same model and task,
each track drawn (the difference asked against the trial, its answers) and the fitted curve, as inline SVG."""
from __future__ import annotations

from html import escape
from typing import Any

import numpy as np

from acousticbench.benchmarks.acoustic.adaptive.threshold import threshold_text
from acousticbench.benchmarks.entry import Entry, Section
from acousticbench.core.tables import Axes, html_table, md_table

PANEL_W, PANEL_H = 240, 150
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")


def _found(entry: Entry) -> dict[str, Any] | None:
    found = getattr(entry.metrics, "adaptive", None)
    return found if isinstance(found, dict) or found is None else found.model_dump()


def _threshold_text(found: dict[str, Any]) -> str:
    text = threshold_text(found)
    if text is None:
        return f"not reached <small>({escape(found['note'] or '')})</small>"
    return f"{escape(text)} <small>{found['trials']} trials</small>"


def _fixed_text(fixed: list[Entry], entry: Entry) -> str:
    """The fixed pack's threshold of the same model and task (its seeds' runs), where there is one."""
    from acousticbench.benchmarks.acoustic.views.figures import physical_text

    fits = [e.metrics.psychometric for e in fixed if e.model == entry.model and e.task == entry.task
            and getattr(e.metrics, "psychometric", None) is not None]
    texts = list(dict.fromkeys(physical_text(f) or "-" for f in fits))
    return "; ".join(texts) if texts else "-"


def _log_ticks(low: float, high: float) -> list[float]:
    candidates = [m * 10.0 ** e for e in range(-4, 4) for m in (1, 2, 5)]
    return [t for t in candidates if low <= t <= high]


def track_panel(found: dict[str, Any]) -> str:
    """Each track's difference (log axis) against its trial; a filled dot a right answer, an open one a wrong one."""
    values = [d for t in found["tracks"] for d in t["differences"]] + [found["lowest"], found["highest"]]
    shift = 1.0 if found["unit"] == "count ratio" else 0.0  # a count ratio drawn by its excess over 1
    logs = [np.log(v - shift) for v in values]
    lo, hi = min(logs), max(logs)
    longest = max([len(t["differences"]) for t in found["tracks"]] + [2])
    ax = Axes(0, longest, lo, hi, PANEL_W, PANEL_H)
    parts = [ax.frame([0, longest], [], "trial")]
    parts += [f'<text class="tick" x="{ax.x(0) - 3}" y="{ax.y(np.log(t)) + 3}" text-anchor="end">{t + shift:g}</text>'
              for t in _log_ticks(np.exp(lo), np.exp(hi))]
    for i, track in enumerate(found["tracks"]):
        colour = COLOURS[i % len(COLOURS)]
        points = [(ax.x(n + 1), ax.y(np.log(d - shift))) for n, d in enumerate(track["differences"])]
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1" points="'
                     + " ".join(f"{x},{y}" for x, y in points) + '"/>')
        parts += [f'<circle cx="{x}" cy="{y}" r="2" stroke="{colour}" fill="{colour if right else "white"}"/>'
                  for (x, y), right in zip(points, track["correct"])]
    if found["reached"]:
        y = ax.y(np.log(found["threshold"] - shift))
        parts.append(f'<line class="crit" x1="{ax.x(0)}" y1="{y}" x2="{ax.x(longest)}" y2="{y}"/>')
    return f'<svg class="panel adaptive-tracks" width="{PANEL_W}" height="{PANEL_H}" role="img">{"".join(parts)}</svg>'


def curve_panel(found: dict[str, Any]) -> str:
    """The posterior-mean curve, P(correct) against the difference (log axis), with the threshold and its interval."""
    shift = 1.0 if found["unit"] == "count ratio" else 0.0
    xs = [np.log(d - shift) for d, _ in found["curve"]]
    ax = Axes(min(xs), max(xs), 0.4, 1.0, PANEL_W, PANEL_H)
    parts = [ax.frame([], (0.5, 0.75, 1.0), found["unit"])]
    parts += [f'<text class="tick" x="{ax.x(np.log(t))}" y="{ax.y(0.4) + 11}" text-anchor="middle">{t + shift:g}'
              "</text>" for t in _log_ticks(np.exp(min(xs)), np.exp(max(xs)))]
    parts.append('<polyline class="fit" points="' + " ".join(f"{ax.x(x)},{ax.y(p)}" for x, (_, p)
                                                             in zip(xs, found["curve"])) + '"/>')
    if found["reached"]:
        low, high = (np.log(v - shift) for v in found["ci95"])
        parts.append(f'<line class="ci" x1="{ax.x(max(low, ax.x0))}" y1="{ax.y(0.75)}" x2="{ax.x(min(high, ax.x1))}" '
                     f'y2="{ax.y(0.75)}"/>')
        parts.append(f'<circle class="thr" cx="{ax.x(np.log(found["threshold"] - shift))}" cy="{ax.y(0.75)}" r="3.5"/>')
    return f'<svg class="panel adaptive-curve" width="{PANEL_W}" height="{PANEL_H}" role="img">{"".join(parts)}</svg>'


def section(adaptive: list[Entry], fixed: list[Entry]) -> Section:
    """The table of adaptive thresholds beside the pack's, and each run's tracks and curve."""
    rows, panels = [], []
    for entry in adaptive:
        found = _found(entry)
        if found is None:
            continue
        label = f"{entry.model} on {entry.task} (seed {entry.seed}, {found['method']})"
        rows.append([escape(entry.model), escape(entry.task), str(entry.seed), escape(found["method"]),
                     _threshold_text(found), _fixed_text(fixed, entry),
                     f"{found['catch_correct']}/{found['catch_trials']}"])
        panels.append(f'<div class="model-row"><h3>{escape(label)}</h3><div class="grid">{track_panel(found)}'
                      f"{curve_panel(found)}</div></div>")
    table = html_table("adaptive", ["Model", "Task", "Seed", "Method", "Adaptive threshold [95%]",
                                    "Fixed pack's threshold [95%]", "Catch right"], rows,
                       "75%-correct threshold in the task's unit: posterior median and central 95% interval over "
                       "the run's trials; the fixed pack's from its runs of the same model and task")
    return Section("s-adaptive", "Adaptive thresholds", "Runs made with <code>--adaptive</code>: each track's "
                   "difference against its trial (filled: right, open: wrong; the line: the threshold), and the "
                   "fitted curve (docs/adaptive.md).", table + "".join(panels))


def markdown_table(adaptive: list[Entry]) -> str:
    """The leaderboard's table of adaptive runs: a line per run, its threshold and interval in the task's unit."""
    rows = []
    for entry in sorted(adaptive, key=lambda e: (e.model, e.task, e.seed)):
        found = _found(entry)
        if found is not None:
            rows.append([entry.model, entry.task, str(entry.seed), entry.made_as or found["method"],
                         threshold_text(found) or "not reached", str(found["trials"])])
        elif entry.figure:  # a reference: its summary.json keeps what the run measured
            rows.append([entry.model, entry.task, f"{entry.seed} (reference)",
                         entry.made_as or (entry.own_items or "").removeprefix("adaptive "),
                         entry.figure.removeprefix("threshold "), str(entry.n)])
    if not rows:
        return ""
    return ("\nAdaptive runs (--adaptive): the 75%-correct threshold, posterior median [95% interval], in the task's "
            "unit, over the run's trials:\n\n" + md_table(["Model", "Task", "Seed", "Method", "Threshold", "Trials"],
                                                         rows) + "\n")
