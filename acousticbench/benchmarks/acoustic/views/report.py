"""AcousticBench's sections of the HTML report: the leaderboard, the LoRA lift, psychometric curves and thresholds,
and the diagnostics, as tables and figures."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

from acousticbench.benchmarks.acoustic.views import summaries
from acousticbench.benchmarks.acoustic.views.figures import psychometric_grid, threshold_text
from acousticbench.benchmarks.acoustic.views.leaderboard import LEFT_OUT, average_key, seeds_text, table_rows
from acousticbench.benchmarks.acoustic.views.summaries import Psychometric
from acousticbench.benchmarks.entry import Entry, ModelOrder, Section
from acousticbench.benchmarks.marks import html_mark
from acousticbench.core.stats import SMALL_N, censored_text
from acousticbench.core.tables import html_table, pct


def sections(entries: list[Entry], order: ModelOrder, records: Mapping[Path, Sequence] | None = None) -> list[Section]:
    """The leaderboard always; the LoRA lift, curves and diagnostics where the runs have them (read from the entries'
    metrics: the records are not needed); adaptive runs in a section of their own, beside the pack's thresholds."""
    from acousticbench.benchmarks.acoustic.adaptive.figures import section

    adaptive = [e for e in entries if e.own_items]  # its trials its own: thresholds, never an accuracy cell
    entries = [e for e in entries if not e.own_items]
    tasks, rows = table_rows(entries, order)
    out = [Section("s-leaderboard", "AcousticBench leaderboard", "The paper's main table: accuracy over scored "
                   "questions, a null answer counted wrong, mean ± std over seeds (paper: seeds 42-44, "
                   "<code>--split all</code>).", leaderboard(tasks, rows))] if rows else []  # adaptive runs alone
    lora_rows = summaries.lora_rows(tasks, rows)
    if lora_rows:
        out.append(Section("s-lora", "LoRA lift", "Each finetune <code>&lt;base&gt;+&lt;adapter&gt;</code> against its "
                           "base, both run with <code>--split eval</code> (the half the adapters were not trained on).",
                           lora(tasks, lora_rows)))
    cells = summaries.psychometric_cells(tasks, rows)
    if cells:
        out.append(Section("s-psychometric", "Psychometric curves", "Accuracy by difficulty level (95% bars: "
                           f"Clopper-Pearson's exact interval where a level has under {SMALL_N} questions, as in a full "
                           "run's 80, since Wilson's covers less than 95% there near 100% correct; Wilson's above), "
                           "the fitted two-alternative psychometric function (guess rate 0.5, a lapse rate; maximum "
                           "likelihood), and the difference where it falls to 75% correct, in the task's unit (red dot; "
                           "bar: its 95% posterior interval over questions). Counts averaged over seeds; "
                           "human listeners' rows are marked.", thresholds(tasks, cells, humans(rows))
                           + psychometric_grid(cells, humans(rows))))
    diagnostics_rows = summaries.diagnostics_rows(tasks, rows)
    if diagnostics_rows:
        out.append(Section("s-diagnostics", "Diagnostics", "What the accuracy does not show: the ceiling, response "
                           "bias and position bias.", diagnostics(tasks, diagnostics_rows)))
    if adaptive:
        out.append(section(adaptive, entries))
    return out


HUMAN_MARK = ' <small class="human" title="a person answered on the listening page (--model Human)">human listener</small>'


def humans(rows: list[dict]) -> set[str]:
    """The rows a person answered (the Human model), by their label."""
    return {row["model"] for row in rows if row.get("human")}


def leaderboard(tasks: list[str], rows: list[dict]) -> str:
    """Model x task: mean ± std over seeds, the 95% interval clustered by question across seeds, the accuracy without
    errors where a run had any, unparsed, truncated and error rates; the average over the tasks every row ran."""
    out = []
    for row in rows:
        cells = []
        for task in tasks:
            cell, ci, clean = row["cells"].get(task), row["interval"].get(task), row["without_errors"].get(task)
            if not cell:
                cells.append("-")
                continue
            (mean, std), seeds, n = cell
            interval = f'<small>[{pct(ci.low)}, {pct(ci.high)}]</small>' if ci else ""
            note = html_mark(row["marked"].get(task), LEFT_OUT)
            werr = f'<small class="werr">w/o errors {pct(clean)}</small>' if clean is not None else ""
            cells.append(f'<span class="num" title="{seeds} seeds, {n} answers">{pct(mean)} ± {pct(std)}</span>'
                         f"{interval}{werr}{note}")
        average = pct(row["average"]) + (' <small class="partial">partial</small>' if row["partial"] else "")
        out.append([escape(row["model"]) + (HUMAN_MARK if row.get("human") else ""), row["split"], *cells, average,
                    seeds_text(row),
                    pct(row["parse"]), pct(row["truncated"]), pct(row["error"])])
    header = ["Model", "Split", *tasks, "Avg", "Seeds", "Unparsed %", "Truncated %", "Error %"]
    return html_table("leaderboard", header, out,
                      "Accuracy % (mean ± std over seeds; below: 95% interval clustered by question across seeds, "
                      f"Clopper-Pearson's exact one where the cell is worth under {SMALL_N} questions, else Wilson's; "
                      f"'w/o errors': server and judge errors left out). {average_key(rows)}. Seeds: per task, a range "
                      "where they differ")


def lora(tasks: list[str], rows: list[dict]) -> str:
    out = []
    for row in rows:
        cells = [f'{pct(c[0])} <small>vs {pct(c[1])}</small> <b class="{"up" if c[2] >= 0 else "down"}">'
                 f'{"+" if c[2] >= 0 else ""}{pct(c[2])}</b>' if c else "-" for c in row["cells"].values()]
        out.append([escape(row["model"]), escape(row["base"]), *cells,
                    "-" if row["lift"] is None else f'{"+" if row["lift"] >= 0 else ""}{pct(row["lift"])}'])
    return html_table("lora", ["Finetune", "Base", *tasks, "Avg lift"], out,
                      "LoRA lift on --split eval: finetune accuracy % vs its base, and the difference in points "
                      "(its paired test by question, seeds averaged, is in Model against model)")


def thresholds(tasks: list[str], cells: list[Psychometric], human: set[str] = frozenset()) -> str:
    """Model x task: the difference (in the task's unit) at which accuracy falls to 75%, with its level and the
    range of the seeds' own thresholds (interval: 95% of the threshold's posterior, over questions)."""
    by_row: dict[str, dict[str, str]] = {}
    for cell in cells:
        spread = _seed_range([t for t in cell.seed_thresholds if t is not None])
        by_row.setdefault(cell.row, {})[cell.task] = threshold_text(cell.fit) + spread
    out = [[escape(row) + (HUMAN_MARK if row in human else ""), *(values.get(t, "-") for t in tasks)]
           for row, values in by_row.items()]
    return html_table("thresholds", ["Model", *tasks], out, "Threshold at 75% correct in the task's unit [95% "
                      "interval] (level; seeds: the range of each seed's own threshold, a seed beyond the tested "
                      "levels shown as such and counted); a smaller difference is "
                      "better; <: still above 75% at the smallest difference tested; >: below 75% even at the largest")


def _seed_range(values: list[tuple[str, float]]) -> str:
    """' seeds 2.10–&gt;5 (1 of 3 beyond the tested levels)': the range of the seeds' own thresholds, a seed beyond
    the tested levels shown as such, never dropped; '' for one seed."""
    if len(values) < 2:
        return ""
    rank = {"<": 0, "=": 1, ">": 2}
    low, high = min(values, key=lambda v: (rank[v[0]], v[1])), max(values, key=lambda v: (rank[v[0]], v[1]))
    beyond = sum(side != "=" for side, _ in values)
    note = f" ({beyond} of {len(values)} beyond the tested levels)" if beyond else ""
    return f' <small>seeds {escape(censored_text(low, 3))}–{escape(censored_text(high, 3))}{note}</small>'


DIAGNOSTIC_TABLES = (  # id, value, its count, what the count counts, caption
    ("diag-catch", "catch_accuracy", "n_catch", "questions",
     "Catch-trial accuracy % (the largest differences: the task's practical ceiling)"),
    ("diag-identical", "identical_p_a", "n_identical", "questions",
     "P(chose A) % on identical pairs (50: no response bias)"),
    ("diag-position", "position_p_a", "n_position_wrong", "wrong answers, all seeds",
     "Position bias: P(chose A) % among the wrong answers on order-swapped pairs (each pair one question keyed A, one "
     "B, so ability cancels; 50: no position bias, above 50: leans to the first clip, in dir to the left)"),
    ("diag-swap", "swap_consistency", "n_swap_pairs", "twin pairs",
     "Swap consistency % (order-swapped twins whose answer followed the swap: mostly ability, not bias; a listener "
     "that hears 40% of the differences and guesses evenly scores about 58)"),
)


def diagnostics(tasks: list[str], rows: list[dict]) -> str:
    """A model x task table per diagnostic: the mean over seeds, and (small) what it is over."""
    by_row: dict[tuple[str, str], dict[str, dict]] = {}
    for r in rows:
        by_row.setdefault((r["model"], r["split"]), {})[r["task"]] = r
    html = []
    for table_id, value, count, unit, caption in DIAGNOSTIC_TABLES:
        out = [[escape(model), split, *(f'{pct(cells[t][value])}<small>{cells[t][count]} {unit}</small>'
                                        if t in cells else "-" for t in tasks)]
               for (model, split), cells in by_row.items()]
        html.append(html_table(table_id, ["Model", "Split", *tasks], out, caption + "; mean over seeds"))
    return "".join(html)
