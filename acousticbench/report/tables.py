"""The report's tables as HTML: the AcousticBench leaderboard, the LoRA lift, thresholds, diagnostics, AudioICL by k."""
from __future__ import annotations

from html import escape

from acousticbench.leaderboard import mean_known, pct
from acousticbench.report.figures import threshold_text
from acousticbench.report.summaries import Psychometric


def _table(table_id: str, header: list[str], rows: list[list[str]], caption: str) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (f'<p class="caption">{escape(caption)}</p><table id="{table_id}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def leaderboard(tasks: list[str], rows: list[dict]) -> str:
    """Model x task: mean ± std over seeds, the 95% interval clustered by question across seeds, the accuracy without
    errors where a run had any, unparsed and error rates; the average over the tasks every row ran."""
    out = []
    for row in rows:
        cells = []
        for task in tasks:
            cell, ci, without = row["cells"].get(task), row["interval"].get(task), row["without_errors"].get(task)
            if not cell:
                cells.append("-")
                continue
            (mean, std), seeds, n = cell
            interval = f'<small>[{pct(ci.low)}, {pct(ci.high)}]</small>' if ci else ""
            clean = f'<small class="werr">w/o errors {pct(without)}</small>' if without is not None else ""
            cells.append(f'<span class="num" title="{seeds} seeds, {n} answers">{pct(mean)} ± {pct(std)}</span>'
                         f"{interval}{clean}")
        average = pct(row["average"]) + (' <small class="partial">partial</small>' if row["partial"] else "")
        out.append([escape(row["model"]), row["split"], *cells, average, str(row["seeds"]),
                    pct(row["parse"]), pct(row["truncated"]), pct(row["error"])])
    over = ", ".join(rows[0]["average_over"]) if rows else ""
    header = ["Model", "Split", *tasks, "Avg", "Seeds", "Unparsed %", "Truncated %", "Error %"]
    return _table("leaderboard", header, out,
                  "Accuracy % (mean ± std over seeds; below: 95% interval clustered by question across seeds; "
                  "'w/o errors': server and judge errors left out). Avg over the tasks every row ran "
                  f"({over or 'none'}); 'partial': the row lacks some tasks")


def lora(tasks: list[str], rows: list[dict]) -> str:
    out = []
    for row in rows:
        cells = [f'{pct(c[0])} <small>vs {pct(c[1])}</small> <b class="{"up" if c[2] >= 0 else "down"}">'
                 f'{"+" if c[2] >= 0 else ""}{pct(c[2])}</b>' if c else "-" for c in row["cells"].values()]
        out.append([escape(row["model"]), escape(row["base"]), *cells,
                    "-" if row["lift"] is None else f'{"+" if row["lift"] >= 0 else ""}{pct(row["lift"])}'])
    return _table("lora", ["Finetune", "Base", *tasks, "Avg lift"], out,
                  "LoRA lift on --split eval: finetune accuracy % vs its base, and the difference in points")


def thresholds(tasks: list[str], cells: list[Psychometric]) -> str:
    """Model x task: the difference (in the task's unit) at which accuracy falls to 75%, with its level and the
    spread of the seeds' own thresholds (interval: parametric bootstrap, 95%, over questions)."""
    by_row: dict[str, dict[str, str]] = {}
    for cell in cells:
        known = [t for t in cell.seed_thresholds if t is not None]
        spread = (f' <small>seeds {min(known):.2f}–{max(known):.2f}</small>' if len(known) > 1 else "")
        by_row.setdefault(cell.row, {})[cell.task] = threshold_text(cell.fit) + spread
    out = [[escape(row), *(values.get(t, "-") for t in tasks)] for row, values in by_row.items()]
    return _table("thresholds", ["Model", *tasks], out, "Threshold at 75% correct in the task's unit [95% interval] "
                  "(level; seeds: the range of each seed's own threshold); a smaller difference is better; &lt;: "
                  "still above 75% at the smallest difference tested; &gt;: below 75% even at the largest")


DIAGNOSTIC_TABLES = (
    ("diag-catch", "catch_accuracy", "n_catch", "Catch-trial accuracy % (the largest differences: the task's practical "
     "ceiling)"),
    ("diag-identical", "identical_p_a", "n_identical", "P(chose A) % on identical pairs (50: no response bias)"),
    ("diag-swap", "swap_consistency", "n_swap_pairs", "Swap consistency % (order-swapped twins whose answer followed "
     "the swap; 100: no position bias)"),
)


def diagnostics(tasks: list[str], rows: list[dict]) -> str:
    """A model x task table per diagnostic: the mean over seeds, and (small) the questions behind it."""
    by_row: dict[tuple[str, str], dict[str, dict]] = {}
    for r in rows:
        by_row.setdefault((r["model"], r["split"]), {})[r["task"]] = r
    html = []
    for table_id, value, count, caption in DIAGNOSTIC_TABLES:
        out = [[escape(model), split, *(f'{pct(cells[t][value])}<small>{cells[t][count]} questions</small>'
                                        if t in cells else "-" for t in tasks)]
               for (model, split), cells in by_row.items()]
        html.append(_table(table_id, ["Model", "Split", *tasks], out, caption + "; mean over seeds"))
    return "".join(html)


def audioicl(rows: list[dict]) -> str:
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
    return _table("audioicl", ["Model", "Task", *(f"k={k}" for k in ks), "Seeds", "No answer %", "Truncated %",
                               "Error %"], out,
                  "AudioICL accuracy % by number of shots (mean ± std over seeds; strict: refusals, cut replies and "
                  "hedges are never right)")
