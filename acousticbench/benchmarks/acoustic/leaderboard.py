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
from acousticbench.core.identity import row_labels
from acousticbench.core.stats import interval_of, without_errors
from acousticbench.core.tables import cell_text, md_table, mean_known, mean_std, pct

NAME = "AcousticBench"


def entry(run_dir: Path, config: dict[str, Any], metrics: Metrics) -> Entry[Metrics]:
    spec, scored = config["spec"], metrics.scored
    # runs written before `errors` was counted: from the error rate, not the field's default 0
    errors = scored.errors if "errors" in scored.model_fields_set else round((scored.error_rate or 0) * scored.n)
    clean = scored.correct / (scored.n - errors) if scored.n > errors else None
    return Entry(benchmark=NAME, model=spec["model"], task=spec["task"], split=spec["split"],
                 manifest=config["archive"]["manifest_sha256"], seed=spec["seed"], max_samples=spec.get("max_samples"),
                 n=scored.n, accuracy=scored.accuracy, parse_failure_rate=scored.parse_failure_rate,
                 error_rate=scored.error_rate, run_dir=run_dir, config=config, metrics=metrics,
                 accuracy_without_errors=clean, truncation_rate=scored.truncation_rate or 0.0)


def reference_entry(summary: dict[str, Any], run: dict[str, Any], records: list[dict[str, Any]]) -> Entry:
    scored = [r for r in records if r.get("kind", "scored") == "scored"]
    status, n = Counter(r["status"] for r in scored), len(scored)
    return Entry(benchmark=NAME, model=summary["model"], task=summary["task"], split=summary["split"],
                 manifest=summary["archive_manifest_sha256"], seed=run["seed"], max_samples=summary.get("max_samples"),
                 n=n, accuracy=run["accuracy"], parse_failure_rate=status["unparsed"] / n if n else None,
                 error_rate=status["error"] / n if n else None, truncation_rate=status["truncated"] / n if n else None)


def table_rows(entries: list[Entry], order: ModelOrder) -> tuple[list[str], list[dict]]:
    """Rows (one per model, identity, split, archive) with a cell per task; runs that differ in any of these never
    share a cell, and a row is named by how its identity differs. The average is over the tasks every row ran (a
    row that lacks some is `partial`), mono listeners' dir left out."""
    tasks = [t for t in TASKS if any(e.task == t for e in entries)] + sorted({e.task for e in entries} - set(TASKS))
    manifests: dict[tuple[str, str], set[str]] = {}
    for e in entries:
        manifests.setdefault((e.model, e.split), set()).add(e.manifest)
    groups: dict[tuple, list[Entry]] = {}
    for e in entries:  # a run on the first N questions never shares a cell with full runs
        groups.setdefault((e.model, e.identity, e.split, e.max_samples or 0, e.manifest), []).append(e)
    labels = row_labels(entries)
    common = [t for t in tasks if all(any(e.task == t and e.accuracy is not None for e in g) for g in groups.values())]
    rows = []
    for (model, identity, split, max_samples, manifest), group in sorted(
            groups.items(), key=lambda item: (order(item[0][0]), *item[0])):
        label = labels[(model, identity)] + (f" [first {max_samples}]" if max_samples else "")
        if len(manifests[(model, split)]) > 1:
            label += f" [archive {manifest[:8]}]"
            print(f"note: {model} ({split}) has runs on {len(manifests[(model, split)])} different archives; "
                  "they are listed as separate rows", file=sys.stderr)
        cells, intervals, clean = {}, {}, {}
        for task in tasks:
            runs = [e for e in group if e.task == task and e.accuracy is not None]
            cells[task] = (mean_std([e.accuracy for e in runs]), len(runs), sum(e.n for e in runs)) if runs else None
            intervals[task] = interval_of(runs, line_outcome) if runs else None
            clean[task] = without_errors(runs) if runs else None
        # a mono listener's dir is chance by construction: marked, and left out of the average across tasks
        marked = {t: e.listener for t in tasks for e in group if e.task == t and e.listener}
        means = [cells[t][0][0] for t in common if t not in marked]
        rows.append({"model": label, "split": split, "cells": cells, "interval": intervals, "without_errors": clean,
                     "entries": group, "marked": marked, "key": (model, split, max_samples, manifest),
                     "identity": identity, "average": statistics.fmean(means) if means else None,
                     "human": any(e.human for e in group),
                     "partial": any(cells[t] is None for t in tasks), "average_over": common,
                     "seeds": max(len({e.seed for e in group if e.task == t}) for t in tasks),
                     "parse": mean_known([e.parse_failure_rate for e in group]),
                     "truncated": mean_known([e.truncation_rate for e in group]),
                     "error": mean_known([e.error_rate for e in group])})
    return tasks, rows


def markdown(entries: list[Entry], order: ModelOrder) -> str:
    tasks, rows = table_rows(entries, order)
    table = md_table(["Model", "Split", *tasks, "Avg", "Seeds", "Parse fail %", "Truncated %", "Error %"],
                     [[row["model"], row["split"],
                       *(cell_text(c[0] if c else None, row["interval"][t], row["without_errors"][t])
                         + (" †" if t in row["marked"] else "") for t, c in row["cells"].items()),
                       pct(row["average"]) + (" (partial)" if row["partial"] else ""), str(row["seeds"]),
                       pct(row["parse"]), pct(row["truncated"]), pct(row["error"])] for row in rows])
    notes = sorted({note for row in rows for note in row["marked"].values()})
    over = rows[0]["average_over"] if rows else []
    key = ("\nAccuracy %: mean ± std over seeds [95% interval clustered by question across seeds]; 'w/o errors': "
           f"server and judge errors left out. Avg over the tasks every row ran ({', '.join(over) or 'none'}); "
           "(partial): the row lacks some tasks.\n")
    return table + "".join(f"\n† {note}: left out of Avg.\n" for note in notes) + key + _thresholds(tasks, rows)


def _thresholds(tasks: list[str], rows: list[dict]) -> str:
    """The 75%-correct threshold in each task's unit, mean over the seeds' own fits (metrics.json); '' when no run
    has one (references, runs before units were recorded)."""
    lines = []
    for row in rows:
        cells = []
        for task in tasks:
            fits = [e.metrics.psychometric for e in row["entries"]
                    if e.task == task and e.metrics is not None and e.metrics.psychometric is not None]
            known = [f.threshold_physical for f in fits if f.threshold_physical is not None]
            unit = next((f.unit for f in fits if f.unit), "")
            cells.append(f"{statistics.fmean(known):.3g} {unit}" if known else "-")
        if any(c != "-" for c in cells):
            lines.append([row["model"], row["split"], *cells])
    if not lines:
        return ""
    return "\nThreshold at 75% correct, in each task's unit (mean over seeds):\n\n" + md_table(
        ["Model", "Split", *tasks], lines)


def csv_rows(entries: list[Entry], order: ModelOrder) -> list[list[str | int]]:
    tasks, rows = table_rows(entries, order)
    return [[NAME, row["model"], row["split"], task, "", f"{cell[0][0]:.6f}", f"{cell[0][1]:.6f}", cell[1], cell[2]]
            for row in rows for task, cell in row["cells"].items() if cell]
