"""AcousticBench's sections of the HTML report: the leaderboard, the LoRA lift, psychometric curves and thresholds,
and the diagnostics, as tables and figures."""
from __future__ import annotations

from html import escape

from acousticbench.benchmarks.acoustic import summaries
from acousticbench.benchmarks.acoustic.figures import psychometric_grid, threshold_text
from acousticbench.benchmarks.acoustic.leaderboard import table_rows
from acousticbench.benchmarks.acoustic.summaries import Psychometric
from acousticbench.benchmarks.entry import Entry, ModelOrder, Section
from acousticbench.views import html_table, pct


def sections(entries: list[Entry], order: ModelOrder) -> list[Section]:
    """The leaderboard always; the LoRA lift, curves and diagnostics where the runs have them."""
    tasks, rows = table_rows(entries, order)
    out = [Section("s-leaderboard", "AcousticBench leaderboard", "The paper's main table: accuracy over scored "
                   "questions, a null answer counted wrong, mean ± std over seeds (paper: seeds 42-44, "
                   "<code>--split all</code>).", leaderboard(tasks, rows))]
    lora_rows = summaries.lora_rows(tasks, rows)
    if lora_rows:
        out.append(Section("s-lora", "LoRA lift", "Each finetune <code>&lt;base&gt;+&lt;adapter&gt;</code> against its "
                           "base, both run with <code>--split eval</code> (the half the adapters were not trained on).",
                           lora(tasks, lora_rows)))
    cells = summaries.psychometric_cells(tasks, rows)
    if cells:
        out.append(Section("s-psychometric", "Psychometric curves", "Accuracy by difficulty level (Wilson 95% bars), "
                           "the fitted two-alternative psychometric function (guess rate 0.5, a lapse rate; maximum "
                           "likelihood), and the level where it falls to 75% correct (red dot; bar: parametric-bootstrap "
                           "95% interval). Seeds pooled.", thresholds(tasks, cells) + psychometric_grid(cells)))
    diagnostics_rows = summaries.diagnostics_rows(tasks, rows)
    if diagnostics_rows:
        out.append(Section("s-diagnostics", "Diagnostics", "What the accuracy does not show: the ceiling, response "
                           "bias and position bias.", diagnostics(tasks, diagnostics_rows)))
    return out


def leaderboard(tasks: list[str], rows: list[dict]) -> str:
    """Model x task: mean ± std over seeds, the Wilson 95% interval of the pooled answers, unparsed and error rates."""
    out = []
    for row in rows:
        cells = []
        for task in tasks:
            cell, ci = row["cells"].get(task), row["wilson"].get(task)
            if not cell:
                cells.append("-")
                continue
            (mean, std), seeds, n = cell
            interval = f'<small>[{pct(ci.low)}, {pct(ci.high)}]</small>' if ci else ""
            mark = row["marked"].get(task)
            note = f' <b class="mono" title="{escape(mark)}: left out of Avg">{escape(mark)}</b>' if mark else ""
            cells.append(f'<span class="num" title="{seeds} seeds, {n} answers">{pct(mean)} ± {pct(std)}</span>'
                         f"{interval}{note}")
        out.append([escape(row["model"]), row["split"], *cells, pct(row["average"]), str(row["seeds"]),
                    pct(row["parse"]), pct(row["error"])])
    return html_table("leaderboard", ["Model", "Split", *tasks, "Avg", "Seeds", "Unparsed %", "Error %"], out,
                      "Accuracy % (mean ± std over seeds; below: Wilson 95% interval of all answers pooled)")


def lora(tasks: list[str], rows: list[dict]) -> str:
    out = []
    for row in rows:
        cells = [f'{pct(c[0])} <small>vs {pct(c[1])}</small> <b class="{"up" if c[2] >= 0 else "down"}">'
                 f'{"+" if c[2] >= 0 else ""}{pct(c[2])}</b>' if c else "-" for c in row["cells"].values()]
        out.append([escape(row["model"]), escape(row["base"]), *cells,
                    "-" if row["lift"] is None else f'{"+" if row["lift"] >= 0 else ""}{pct(row["lift"])}'])
    return html_table("lora", ["Finetune", "Base", *tasks, "Avg lift"], out,
                      "LoRA lift on --split eval: finetune accuracy % vs its base, and the difference in points")


def thresholds(tasks: list[str], cells: list[Psychometric]) -> str:
    """Model x task: the level at which accuracy falls to 75% (interval: parametric bootstrap, 95%)."""
    by_row: dict[str, dict[str, str]] = {}
    for cell in cells:
        by_row.setdefault(cell.row, {})[cell.task] = threshold_text(cell.fit)
    out = [[escape(row), *(values.get(t, "-") for t in tasks)] for row, values in by_row.items()]
    return html_table("thresholds", ["Model", *tasks], out, "Threshold level at 75% correct [95% interval]; "
                      "higher is better (level 5 is the hardest); >5: still above 75% at the hardest level; <1: below "
                      "75% even at the easiest")


DIAGNOSTIC_TABLES = (
    ("diag-catch", "catch_accuracy", "n_catch", "Catch-trial accuracy % (the largest differences: the task's practical "
     "ceiling)"),
    ("diag-identical", "identical_p_a", "n_identical", "P(chose A) % on identical pairs (50: no response bias)"),
    ("diag-swap", "swap_consistency", "n_swap_pairs", "Swap consistency % (order-swapped twins whose answer followed "
     "the swap; 100: no position bias)"),
)


def diagnostics(tasks: list[str], rows: list[dict]) -> str:
    """A model x task table per diagnostic: the mean over seeds, and (small) the items over all seeds."""
    by_row: dict[tuple[str, str], dict[str, dict]] = {}
    for r in rows:
        by_row.setdefault((r["model"], r["split"]), {})[r["task"]] = r
    html = []
    for table_id, value, count, caption in DIAGNOSTIC_TABLES:
        out = [[escape(model), split, *(f'{pct(cells[t][value])}<small>{cells[t][count]} items</small>'
                                        if t in cells else "-" for t in tasks)]
               for (model, split), cells in by_row.items()]
        html.append(html_table(table_id, ["Model", "Split", *tasks], out, caption + "; mean over seeds"))
    return "".join(html)
