"""AcousticBench in the leaderboard: an Entry per run or reference run, and a row per (model, split, archive) with a
cell per task (mean ± std over seeds, the Wilson 95% interval of the pooled answers)."""
from __future__ import annotations

import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from acousticbench.stats import wilson_interval
from acousticbench.benchmarks.acoustic.tasks import TASKS
from acousticbench.benchmarks.entry import Entry, ModelOrder
from acousticbench.views import md_table, mean_known, mean_std, pct

NAME = "AcousticBench"


def entry(run_dir: Path, config: dict[str, Any], metrics: dict[str, Any]) -> Entry:
    spec, scored = config["spec"], metrics["scored"]
    return Entry(benchmark=NAME, model=spec["model"], task=spec["task"], split=spec["split"],
                 manifest=config["archive"]["manifest_sha256"], seed=spec["seed"], max_samples=spec.get("max_samples"),
                 n=scored["n"], accuracy=scored["accuracy"], parse_failure_rate=scored["parse_failure_rate"],
                 error_rate=scored["error_rate"], run_dir=run_dir, config=config, metrics=metrics)


def reference_entry(summary: dict[str, Any], run: dict[str, Any], records: list[dict[str, Any]]) -> Entry:
    scored = [r for r in records if r.get("kind", "scored") == "scored"]
    status, n = Counter(r["status"] for r in scored), len(scored)
    return Entry(benchmark=NAME, model=summary["model"], task=summary["task"], split=summary["split"],
                 manifest=summary["archive_manifest_sha256"], seed=run["seed"], max_samples=summary.get("max_samples"),
                 n=n, accuracy=run["accuracy"], parse_failure_rate=status["unparsed"] / n if n else None,
                 error_rate=status["error"] / n if n else None)


def table_rows(entries: list[Entry], order: ModelOrder) -> tuple[list[str], list[dict]]:
    """Rows (one per model, split, archive) with a cell per task; runs from different archives never share a cell."""
    tasks = [t for t in TASKS if any(e.task == t for e in entries)] + sorted({e.task for e in entries} - set(TASKS))
    manifests: dict[tuple[str, str], set[str]] = {}
    for e in entries:
        manifests.setdefault((e.model, e.split), set()).add(e.manifest)
    groups: dict[tuple[str, str, int, str], list[Entry]] = {}
    for e in entries:  # a run on the first N questions never shares a cell with full runs
        groups.setdefault((e.model, e.split, e.max_samples or 0, e.manifest), []).append(e)
    rows = []
    for (model, split, max_samples, manifest), group in sorted(groups.items(), key=lambda item: (order(item[0][0]), *item[0])):
        label = model + (f" [first {max_samples}]" if max_samples else "")
        if len(manifests[(model, split)]) > 1:
            label += f" [archive {manifest[:8]}]"
            print(f"note: {model} ({split}) has runs on {len(manifests[(model, split)])} different archives; "
                  "they are listed as separate rows", file=sys.stderr)
        cells = {}
        for task in tasks:
            accs = [e.accuracy for e in group if e.task == task and e.accuracy is not None]
            cells[task] = (mean_std(accs), len(accs), sum(e.n for e in group if e.task == task)) if accs else None
        # a mono listener's dir is chance by construction: marked, and left out of the average across tasks
        marked = {t: e.listener for t in tasks for e in group if e.task == t and e.listener}
        means = [c[0][0] for t, c in cells.items() if c and t not in marked]
        wilson = {t: wilson_interval(sum(round(e.accuracy * e.n) for e in group if e.task == t and e.accuracy is not None),
                                     sum(e.n for e in group if e.task == t and e.accuracy is not None)) for t in tasks}
        rows.append({"model": label, "split": split, "cells": cells, "wilson": wilson, "entries": group, "marked": marked,
                     "key": (model, split, max_samples, manifest), "average": statistics.fmean(means) if means else None,
                     "seeds": max(len({e.seed for e in group if e.task == t}) for t in tasks),
                     "parse": mean_known([e.parse_failure_rate for e in group]), "error": mean_known([e.error_rate for e in group])})
    return tasks, rows


def markdown(entries: list[Entry], order: ModelOrder) -> str:
    tasks, rows = table_rows(entries, order)
    table = md_table(["Model", "Split", *tasks, "Avg", "Seeds", "Parse fail %", "Error %"],
                     [[row["model"], row["split"],
                       *((f"{pct(c[0][0])} ± {pct(c[0][1])}" + (" †" if t in row["marked"] else "")) if c else "-"
                         for t, c in row["cells"].items()),
                       pct(row["average"]), str(row["seeds"]), pct(row["parse"]), pct(row["error"])] for row in rows])
    notes = sorted({note for row in rows for note in row["marked"].values()})
    return table + "".join(f"\n† {note}: left out of Avg.\n" for note in notes)


def csv_rows(entries: list[Entry], order: ModelOrder) -> list[list[str | int]]:
    tasks, rows = table_rows(entries, order)
    return [[NAME, row["model"], row["split"], task, "", f"{cell[0][0]:.6f}", f"{cell[0][1]:.6f}", cell[1], cell[2]]
            for row in rows for task, cell in row["cells"].items() if cell]
