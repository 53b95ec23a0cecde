"""AudioICL's section of the HTML report: accuracy against the number of shots, every model on one axis per task
(inline SVG) with its 95% intervals and the chance line, and the model x task table with a column per k."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

from acousticbench.benchmarks.audioicl.leaderboard import icl_rows
from acousticbench.benchmarks.entry import Entry, ModelOrder, Section
from acousticbench.benchmarks.marks import html_mark
from acousticbench.core.stats import SMALL_N
from acousticbench.core.tables import Axes, colour, html_table, legend, mean_known, pct


def sections(entries: list[Entry], order: ModelOrder, records: Mapping[Path, Sequence] | None = None) -> list[Section]:
    rows = icl_rows(entries, order)
    models = list(dict.fromkeys(r["model"] for r in rows))
    chances = chance(entries, records or {})
    body = (legend(models) + '<div class="grid">'
            + "".join(kshot_panel(t, m, models, chances.get(t)) for t, m in kshot_series(rows).items()) + "</div>"
            + table(rows))
    from acousticbench.benchmarks.audioicl.order import section

    return [Section("s-audioicl", "AudioICL: accuracy by number of shots", "Mean over seeds; bars: 95% interval "
                    "clustered by episode across seeds (Clopper-Pearson's exact one where a cell is worth under "
                    f"{SMALL_N} episodes, else Wilson's); dashed line: chance, a uniform guess among the answers the "
                    "task's episodes have in these runs (the number of labels in its tooltip). Every model on one "
                    "axis per task.", body), section(entries, order, records or {})]


def chance(entries: list[Entry], records: Mapping[Path, Sequence]) -> dict[str, tuple[float, int]]:
    """task -> (1 / labels, labels): the accuracy of a uniform guess among the gold labels its episodes have."""
    labels: dict[str, set[str]] = {}
    for e in entries:
        for r in records.get(e.run_dir, ()) if e.run_dir else ():
            labels.setdefault(e.task, set()).add(r.gt)
    return {task: (1 / len(found), len(found)) for task, found in labels.items() if found}


def kshot_series(rows: list[dict]) -> dict[str, dict[str, list[tuple]]]:
    """task -> model -> [(k, mean, std, seeds, 95% interval or None, the runs' mark or None)] sorted by k: the points
    of the k-shot curves."""
    series: dict[str, dict[str, list]] = {}
    for row in rows:
        if row["mean_std"]:
            mean, std = row["mean_std"]
            series.setdefault(row["task"], {}).setdefault(row["model"], []).append(
                (row["shots"], mean, std, row["seeds"], row["interval"], row["marked"]))
    for models in series.values():
        for points in models.values():
            points.sort(key=lambda p: p[0])
    return series


def kshot_panel(task: str, models: dict[str, list[tuple]], order: list[str],
                chance_line: tuple[float, int] | None = None) -> str:
    """Accuracy against k for every model on one axis (mean over seeds, 95% interval bars), and the chance line."""
    w, h = 300, 210
    ks = sorted({p[0] for points in models.values() for p in points})
    ax = Axes(min(ks) - 0.3, max(ks) + 0.3, 0.0, 1.0, w, h, pad=32)
    parts = [ax.frame(ks, (0, 0.25, 0.5, 0.75, 1.0), "shots (k)")]
    if chance_line:
        level, n = chance_line
        parts.append(f'<line class="chance" data-chance="{level:.6f}" x1="{ax.x(ax.x0)}" y1="{ax.y(level)}" '
                     f'x2="{ax.x(ax.x1)}" y2="{ax.y(level)}"><title>chance {100 * level:.1f}%: a uniform guess '
                     f'among {n} labels</title></line>')
    for model, points in models.items():
        c = colour(order.index(model))
        parts.append(f'<polyline class="series" stroke="{c}" points="'
                     + " ".join(f"{ax.x(p[0])},{ax.y(p[1])}" for p in points) + '"/>')
        for k, mean, std, seeds, ci, mark in points:
            interval = f" [{pct(ci.low)}, {pct(ci.high)}]" if ci else ""
            if ci:
                parts.append(f'<line class="interval" stroke="{c}" x1="{ax.x(k)}" y1="{ax.y(ci.low)}" x2="{ax.x(k)}" '
                             f'y2="{ax.y(ci.high)}"/>')
            parts.append(f'<circle fill="{c}" cx="{ax.x(k)}" cy="{ax.y(mean)}" r="3">'
                         f'<title>{escape(model)}, k={k}: {100 * mean:.1f}% ± {100 * std:.1f}{interval} ({seeds} '
                         f'seeds){escape(f" † {mark}" if mark else "")}</title></circle>')
    return (f'<svg class="panel kshot" width="{w}" height="{h}" role="img" data-task="{escape(task)}" '
            f'aria-label="{escape(task)} accuracy by k"><text class="ttl" x="32" y="11">{escape(task)}</text>'
            f'{"".join(parts)}</svg>')


def table(rows: list[dict]) -> str:
    """Model x task with a column per k: mean ± std over seeds (strict: a refusal or a hedge is never right)."""
    ks = sorted({r["shots"] for r in rows})
    grouped: dict[tuple[str, str], dict] = {}
    for r in rows:
        group = grouped.setdefault((r["model"], r["task"]), {"k": {}, "no_answer": [], "truncated": [], "error": [],
                                                             "seeds": set()})
        group["k"][r["shots"]] = r
        group["seeds"].add(r["seeds"])  # a range where the k differ, never the most of them
        for key in ("no_answer", "truncated", "error"):
            group[key].append(r[key])
    out = []
    for (model, task), g in grouped.items():
        cells = [f'{pct(g["k"][k]["mean_std"][0])} ± {pct(g["k"][k]["mean_std"][1])}{html_mark(g["k"][k]["marked"])}'
                 if k in g["k"] and g["k"][k]["mean_std"] else "-" for k in ks]
        seeds = f"{min(g['seeds'])}-{max(g['seeds'])}" if len(g["seeds"]) > 1 else str(max(g["seeds"]))
        out.append([escape(model), escape(task), *cells, seeds, pct(mean_known(g["no_answer"])),
                    pct(mean_known(g["truncated"])), pct(mean_known(g["error"]))])
    return html_table("audioicl", ["Model", "Task", *(f"k={k}" for k in ks), "Seeds", "No answer %", "Truncated %",
                                   "Error %"], out,
                      "AudioICL accuracy % by number of shots (mean ± std over seeds; strict: refusals, cut replies "
                      "and hedges are never right; †: runs whose audio the canary found did not reach the model)")
