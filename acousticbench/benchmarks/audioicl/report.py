"""AudioICL's section of the HTML report: accuracy against the number of shots, every model on one axis per task
(inline SVG), and the model x task table with a column per k."""
from __future__ import annotations

from html import escape

from acousticbench.benchmarks.audioicl.leaderboard import icl_rows
from acousticbench.benchmarks.entry import Entry, ModelOrder, Section
from acousticbench.views import Axes, colour, html_table, legend, mean_known, pct


def sections(entries: list[Entry], order: ModelOrder) -> list[Section]:
    rows = icl_rows(entries, order)
    models = list(dict.fromkeys(r["model"] for r in rows))
    body = (legend(models) + '<div class="grid">'
            + "".join(kshot_panel(t, m, models) for t, m in kshot_series(rows).items()) + "</div>" + table(rows))
    return [Section("s-audioicl", "AudioICL: accuracy by number of shots", "Mean over seeds, ± std bars; every model "
                    "on one axis per task.", body)]


def kshot_series(rows: list[dict]) -> dict[str, dict[str, list[tuple[int, float, float, int]]]]:
    """task -> model -> [(k, mean, std, seeds)] sorted by k: the points of the k-shot curves."""
    series: dict[str, dict[str, list]] = {}
    for row in rows:
        if row["mean_std"]:
            mean, std = row["mean_std"]
            series.setdefault(row["task"], {}).setdefault(row["model"], []).append((row["shots"], mean, std, row["seeds"]))
    for models in series.values():
        for points in models.values():
            points.sort()
    return series


def kshot_panel(task: str, models: dict[str, list[tuple]], order: list[str]) -> str:
    """Accuracy against k for every model on one axis (mean over seeds, +- std bars)."""
    w, h = 300, 210
    ks = sorted({p[0] for points in models.values() for p in points})
    ax = Axes(min(ks) - 0.3, max(ks) + 0.3, 0.0, 1.0, w, h, pad=32)
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


def table(rows: list[dict]) -> str:
    """Model x task with a column per k: mean ± std over seeds (strict: a refusal or a hedge is never right)."""
    ks = sorted({r["shots"] for r in rows})
    grouped: dict[tuple[str, str], dict] = {}
    for r in rows:
        group = grouped.setdefault((r["model"], r["task"]), {"k": {}, "no_answer": [], "truncated": [], "error": [],
                                                             "seeds": 0})
        group["k"][r["shots"]] = r
        group["seeds"] = max(group["seeds"], r["seeds"])
        for key in ("no_answer", "truncated", "error"):
            group[key].append(r[key])
    out = []
    for (model, task), g in grouped.items():
        cells = [f'{pct(g["k"][k]["mean_std"][0])} ± {pct(g["k"][k]["mean_std"][1])}'
                 if k in g["k"] and g["k"][k]["mean_std"] else "-" for k in ks]
        out.append([escape(model), escape(task), *cells, str(g["seeds"]), pct(mean_known(g["no_answer"])),
                    pct(mean_known(g["truncated"])), pct(mean_known(g["error"]))])
    return html_table("audioicl", ["Model", "Task", *(f"k={k}" for k in ks), "Seeds", "No answer %", "Truncated %",
                                   "Error %"], out,
                      "AudioICL accuracy % by number of shots (mean ± std over seeds; strict: refusals, cut replies "
                      "and hedges are never right)")
