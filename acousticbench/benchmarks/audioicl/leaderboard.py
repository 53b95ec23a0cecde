"""AudioICL in the leaderboard: an Entry per run or reference run, and a row per (model, identity, task, k) with the
accuracy mean ± std over seeds and its 95% interval clustered by episode across seeds."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from acousticbench.benchmarks.audioicl import TASKS
from acousticbench.benchmarks.audioicl.record import ICLMetrics, line_outcome
from acousticbench.benchmarks.entry import Entry, ModelOrder
from acousticbench.benchmarks.marks import footnotes, marked, note_of
from acousticbench.core.identity import row_labels
from acousticbench.core.stats import interval_of, without_errors
from acousticbench.core.tables import cell_text, md_table, mean_known, mean_std, pct

NAME = "AudioICL"


def _no_answer_share(metrics: ICLMetrics) -> float | None:
    """Episodes answered without an answer found, over all n episodes (as Truncated % and Error % are); a metrics.json
    written before `no_answer` gave the share over the answered episodes, brought here to the same total."""
    n = metrics.n
    if not n or (metrics.no_answer is None and metrics.no_answer_rate is None):
        return None
    if metrics.no_answer is not None:
        return metrics.no_answer / n
    return metrics.no_answer_rate * metrics.statuses.get("answered", 0) / n


def entry(run_dir: Path, config: dict[str, Any], metrics: ICLMetrics) -> Entry[ICLMetrics]:
    spec, icl, n = config["spec"], config["audioicl"], metrics.n
    errors, truncated = metrics.statuses.get("error", 0), metrics.statuses.get("truncated", 0)
    return Entry(benchmark=NAME, model=spec["model"], task=spec["task"],
                 manifest=icl.get("pack_manifest_sha256") or icl["meta_sha256"], seed=spec["seed"],
                 max_samples=spec.get("max_samples"), n=n, accuracy=metrics.accuracy,
                 parse_failure_rate=_no_answer_share(metrics),
                 error_rate=errors / n if n else None, variant=spec["shots"],
                 run_dir=run_dir, config=config, metrics=metrics,
                 accuracy_without_errors=metrics.correct / (n - errors) if n > errors else None,
                 truncation_rate=truncated / n if n else None)


def reference_entry(summary: dict[str, Any], run: dict[str, Any], records: list[dict[str, Any]]) -> Entry:
    n = len(records)
    unreadable = sum(1 for r in records if r["status"] == "answered" and r.get("prediction") is None)
    errors = sum(1 for r in records if r["status"] == "error")
    truncated = sum(1 for r in records if r["status"] == "truncated")
    return Entry(benchmark=NAME, model=summary["model"], task=summary["task"],
                 manifest=summary["archive_manifest_sha256"], seed=run["seed"], max_samples=summary.get("max_samples"),
                 n=n, accuracy=run["accuracy"], parse_failure_rate=unreadable / n if n else None,
                 error_rate=errors / n if n else None, variant=summary.get("shots"),
                 truncation_rate=truncated / n if n else None)


def icl_rows(entries: list[Entry], order: ModelOrder) -> list[dict]:
    """One row per (model, identity, task, k, episodes, meta file): mean ± std over seeds, in registry and task
    order; runs that differ in identity (identity.py) are never pooled, and each row is named by how it differs."""
    groups: dict[tuple, list[Entry]] = {}
    for e in entries:
        groups.setdefault((e.model, e.identity, e.task, e.variant, e.max_samples or 0, e.manifest), []).append(e)
    tasks = list(TASKS)
    labels = row_labels(entries)
    rows = []
    for (model, identity, task, shots, max_samples, manifest), group in groups.items():
        accs = [e.accuracy for e in group if e.accuracy is not None]
        rows.append({"model": labels[(model, identity)] + (f" [first {max_samples}]" if max_samples else ""),
                     "task": task, "shots": shots, "identity": identity, "interval": interval_of(group, line_outcome),
                     "without_errors": without_errors(group),
                     "mean_std": mean_std(accs) if accs else None, "seeds": len({e.seed for e in group}),
                     "n": sum(e.n for e in group), "entries": group, "marked": note_of(group),
                     "no_answer": mean_known([e.parse_failure_rate for e in group]),
                     "truncated": mean_known([e.truncation_rate for e in group]),
                     "error": mean_known([e.error_rate for e in group]),
                     "order": (order(model), model, identity, tasks.index(task) if task in tasks else len(tasks), task,
                               shots, max_samples, manifest)})
    return sorted(rows, key=lambda r: r["order"])


def markdown(entries: list[Entry], order: ModelOrder) -> str:
    rows = icl_rows(entries, order)
    return md_table(["Model", "Task", "k", "Accuracy", "Seeds", "Answers (episodes x seeds)", "No answer %",
                     "Truncated %", "Error %"],
                    [[row["model"], row["task"], str(row["shots"]),
                      marked(cell_text(row["mean_std"], row["interval"], row["without_errors"]), row["marked"]),
                      str(row["seeds"]), str(row["n"]), pct(row["no_answer"]), pct(row["truncated"]), pct(row["error"])]
                     for row in rows]) + footnotes(row["marked"] for row in rows)


def csv_rows(entries: list[Entry], order: ModelOrder) -> list[list[str | int]]:
    return [[NAME, row["model"], "all", row["task"], row["shots"], f"{row['mean_std'][0]:.6f}",
             f"{row['mean_std'][1]:.6f}", row["seeds"], row["n"], row["marked"] or ""]
            for row in icl_rows(entries, order) if row["mean_std"]]
