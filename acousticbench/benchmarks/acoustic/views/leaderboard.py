"""AcousticBench in the leaderboard: an Entry per run or reference run, and a row per (model, identity, split,
archive) with a cell per task: mean ± std over seeds and the 95% interval clustered by question across seeds."""
from __future__ import annotations

import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from acousticbench.benchmarks.acoustic.records import Metrics, line_outcome
from acousticbench.benchmarks.acoustic.tasks import TASKS
from acousticbench.benchmarks.entry import Entry, ModelOrder
from acousticbench.benchmarks.marks import footnotes, marked, note_of
from acousticbench.core.identity import row_labels
from acousticbench.core.stats import censored_median, censored_text, interval_of, without_errors
from acousticbench.core.tables import cell_text, md_table, mean_known, mean_std, pct

NAME = "AcousticBench"
LEFT_OUT = "left out of Avg"  # a marked cell is shown, but what the model could not hear never moves its average


def split_of(e: Entry) -> str:
    """The split of the pack a run asked (its Entry's facet; 'all': both halves)."""
    return dict(e.facets).get("split", "all")


def entry(run_dir: Path, config: dict[str, Any], metrics: Metrics) -> Entry[Metrics]:
    spec, scored = config["spec"], metrics.scored
    # runs written before `errors` was counted: from the error rate, not the field's default 0
    errors = scored.errors if "errors" in scored.model_fields_set else round((scored.error_rate or 0) * scored.n)
    clean = scored.correct / (scored.n - errors) if scored.n > errors else None
    return Entry(benchmark=NAME, model=spec["model"], task=spec["task"], facets=(("split", spec["split"]),),
                 manifest=config["archive"]["manifest_sha256"], seed=spec["seed"], max_samples=spec.get("max_samples"),
                 n=scored.n, accuracy=scored.accuracy, parse_failure_rate=scored.parse_failure_rate,
                 error_rate=scored.error_rate, run_dir=run_dir, config=config, metrics=metrics,
                 accuracy_without_errors=clean, truncation_rate=scored.truncation_rate or 0.0)


def reference_entry(summary: dict[str, Any], run: dict[str, Any], records: list[dict[str, Any]]) -> Entry:
    scored = [r for r in records if r.get("kind", "scored") == "scored"]
    status, n = Counter(r["status"] for r in scored), len(scored)
    return Entry(benchmark=NAME, model=summary["model"], task=summary["task"], facets=(("split", summary["split"]),),
                 manifest=summary["archive_manifest_sha256"], seed=run["seed"], max_samples=summary.get("max_samples"),
                 n=n, accuracy=None if summary.get("kind") else run["accuracy"],
                 parse_failure_rate=status["unparsed"] / n if n else None,
                 error_rate=status["error"] / n if n else None, truncation_rate=status["truncated"] / n if n else None,
                 own_items=summary.get("kind") or None, figure=run.get("figure"), made_as=summary.get("made_as"))


def table_rows(entries: list[Entry], order: ModelOrder) -> tuple[list[str], list[dict]]:
    """Rows (one per model, identity, split, first N, archive) with a cell per task; runs that differ in any of these
    never share a cell, and a row is named by how its identity differs. Each row's average is its own: over the
    benchmark's tasks (average_tasks), mono listeners' dir left out, so no other row's runs can move it; a row that
    lacks some of them, or ran only the first N questions, is `partial` and averaged over what it has."""
    tasks = [t for t in TASKS if any(e.task == t for e in entries)] + sorted({e.task for e in entries} - set(TASKS))
    manifests: dict[tuple[str, str], set[str]] = {}
    for e in entries:
        manifests.setdefault((e.model, split_of(e)), set()).add(e.manifest)
    groups: dict[tuple, list[Entry]] = {}
    for e in entries:  # a run on the first N questions never shares a cell with full runs
        groups.setdefault((e.model, e.identity, split_of(e), e.max_samples or 0, e.manifest), []).append(e)
    labels = row_labels(entries)
    rows = []
    for (model, identity, split, max_samples, manifest), group in sorted(
            groups.items(), key=lambda item: (order(item[0][0]), *item[0])):
        label = labels[(model, identity)] + (f" [first {max_samples}]" if max_samples else "")
        if len(manifests[(model, split)]) > 1:
            label += f" [archive {manifest[:8]}]"
            print(f"note: {model} ({split}) has runs on {len(manifests[(model, split)])} different archives; "
                  "they are listed as separate rows", file=sys.stderr)
        rows.append({"model": label, "split": split, "entries": group, "key": (model, split, max_samples, manifest),
                     "identity": identity, "human": any(e.human for e in group),
                     **_cells(group, tasks), **_average(group, max_samples),
                     "parse": mean_known([e.parse_failure_rate for e in group]),
                     "truncated": mean_known([e.truncation_rate for e in group]),
                     "error": mean_known([e.error_rate for e in group])})
    return tasks, rows


def _cells(group: list[Entry], tasks: list[str]) -> dict[str, Any]:
    """A row's cells: per task (mean, std) over seeds with the seeds and answers behind it, the interval clustered by
    question, the accuracy without errors; and how many seeds its cells have (seeds: the fewest and the most)."""
    cells, intervals, clean = {}, {}, {}
    for task in tasks:
        runs = [e for e in group if e.task == task and e.accuracy is not None]
        cells[task] = (mean_std([e.accuracy for e in runs]), len(runs), sum(e.n for e in runs)) if runs else None
        intervals[task] = interval_of(runs, line_outcome) if runs else None
        clean[task] = without_errors(runs) if runs else None
    counts = [len({e.seed for e in group if e.task == t}) for t in tasks if cells[t]]
    return {"cells": cells, "interval": intervals, "without_errors": clean,
            "seeds": (min(counts), max(counts)) if counts else (0, 0)}


def _average(group: list[Entry], max_samples: int) -> dict[str, Any]:
    """The row's average over its own cells of the benchmark's tasks (a mono listener's dir, chance by construction,
    is marked and left out), and whether it is partial: it lacks some of them or ran only the first N questions."""
    notes = {task: note_of(e for e in group if e.task == task) for task in {e.task for e in group}}
    marks = {task: note for task, note in notes.items() if note}
    ran = {e.task for e in group if e.accuracy is not None}
    over = [t for t in TASKS if t in ran and t not in marks]
    means = [statistics.fmean(e.accuracy for e in group if e.task == t and e.accuracy is not None) for t in over]
    return {"marked": marks, "average": statistics.fmean(means) if means else None, "average_over": over,
            "partial": bool(max_samples) or any(t not in ran for t in TASKS)}


def average_key(rows: list[dict]) -> str:
    """What the Avg column is over, and the tasks of the partial rows (the same words in the Markdown and the report)."""
    by_tasks: dict[tuple[str, ...], list[str]] = {}
    for row in rows:
        if row["partial"]:
            by_tasks.setdefault(tuple(row["average_over"]), []).append(row["model"])
    partial = "; ".join(f"{len(over)} of {len(TASKS)} ({', '.join(over) or 'none'}): {', '.join(models)}"
                        for over, models in by_tasks.items())
    return (f"Avg: each row's own mean over the benchmark's {len(TASKS)} tasks ({', '.join(TASKS)}), never moved by "
            "another row's runs; (partial): a row that lacks some of them or ran only the first N questions, averaged "
            "over its own tasks, comparable only with rows of the same tasks" + (f" [{partial}]" if partial else ""))


def seeds_text(row: dict) -> str:
    """'3', or '1-3' where the row's tasks ran different numbers of seeds."""
    low, high = row["seeds"]
    return str(high) if low == high else f"{low}-{high}"


def markdown(entries: list[Entry], order: ModelOrder) -> str:
    from acousticbench.benchmarks.acoustic.adaptive.figures import markdown_table

    adaptive = [e for e in entries if e.own_items]  # thresholds, not accuracies: a table of their own
    entries = [e for e in entries if not e.own_items]
    if not entries:
        return markdown_table(adaptive)
    tasks, rows = table_rows(entries, order)
    table = md_table(["Model", "Split", *tasks, "Avg", "Seeds", "Parse fail %", "Truncated %", "Error %"],
                     [[row["model"], row["split"],
                       *(marked(cell_text(c[0] if c else None, row["interval"][t], row["without_errors"][t]),
                                row["marked"].get(t)) for t, c in row["cells"].items()),
                       pct(row["average"]) + (" (partial)" if row["partial"] else ""), seeds_text(row),
                       pct(row["parse"]), pct(row["truncated"]), pct(row["error"])] for row in rows])
    key = ("\nAccuracy %: mean ± std over seeds [95% interval clustered by question across seeds]; 'w/o errors': "
           f"server and judge errors left out. {average_key(rows)}. Seeds: per task, a range where they differ.\n")
    return (table + footnotes((n for row in rows for n in row["marked"].values()), LEFT_OUT) + key
            + _thresholds(tasks, rows)
            + (markdown_table(adaptive) if adaptive else ""))


def _thresholds(tasks: list[str], rows: list[dict]) -> str:
    """The 75%-correct threshold in each task's unit, the median over the seeds' own fits (metrics.json) with a seed
    beyond the tested differences counted as such, never dropped; '' when no run has one (references, runs before
    units were recorded)."""
    lines = []
    for row in rows:
        cells = [_threshold_cell([e.metrics.psychometric for e in row["entries"] if e.task == task and e.metrics])
                 for task in tasks]
        if any(c != "-" for c in cells):
            lines.append([row["model"], row["split"], *cells])
    if not lines:
        return ""
    return ("\nThreshold at 75% correct, in each task's unit: the median over seeds, where a seed whose curve stays "
            "above 75% at every tested difference counts as '< the smallest' (below 75% at every one: '> the "
            "largest'), named and never dropped:\n\n" + md_table(["Model", "Split", *tasks], lines))


def _threshold_cell(fits: list) -> str:
    """'0.21 semitones (median of 8 seeds; 3 beyond the tested range: < 0.2, < 0.2, < 0.2)'; one seed with its
    interval: '< 0.2 semitones [< 0.2, 0.31]'; or '-'."""
    given = [(f, v) for f in fits if f is not None and (v := f.censored(physical=True)) is not None]
    values = [v for _, v in given]
    if not values:
        return "-"
    median = censored_median(values)
    unit = next(f.unit for f in fits if f is not None and f.unit)
    notes = [f"median of {len(values)} seeds"] if len(values) > 1 else []
    beyond = [censored_text(v) for v in values if v[0] != "="]
    if beyond:
        notes.append(f"{len(beyond)} beyond the tested range: {', '.join(beyond)}")
    if len(fits) > len(values):
        notes.append(f"{len(fits) - len(values)} without a threshold")
    text = f"{censored_text(median)} {unit}" if median else "undetermined"
    if len(given) == 1 and (interval := given[0][0].interval_text(physical=True)):
        text += f" {interval}"  # one seed: its own 95% interval (metrics.json), censored or not
    return text + (f" ({'; '.join(notes)})" if notes else "")


def csv_rows(entries: list[Entry], order: ModelOrder) -> list[list[str | int]]:
    """Accuracy cells; adaptive runs and their references (thresholds, not accuracies) are left out."""
    tasks, rows = table_rows([e for e in entries if not e.own_items], order)
    return [[NAME, row["model"], row["split"], task, "", f"{cell[0][0]:.6f}", f"{cell[0][1]:.6f}", cell[1], cell[2],
             row["marked"].get(task) or ""] for row in rows for task, cell in row["cells"].items() if cell]
