"""The leaderboard: finished runs and references of both benchmarks, mean +- std over seeds; a section per benchmark.
AcousticBench: a row per (model, identity, split, archive) with a cell per task. AudioICL: a row per (model,
identity, task, k). A run's identity (identity.py: judge, rules, API and served model ids, prompt style) keeps unlike
runs apart; each cell's interval is clustered by question across seeds (seeds.py)."""
from __future__ import annotations

import csv
import io
import json
import statistics
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from acousticbench.identity import Identity, differences, run_identity
from acousticbench.results import CONFIG, METRICS, RESPONSES
from acousticbench.seeds import across_seeds
from acousticbench.benchmarks.acoustic.tasks import TASKS


@dataclass(frozen=True)
class Entry:
    """One finished run of one (model, task, seed)."""

    model: str
    task: str
    split: str
    manifest: str
    seed: int
    max_samples: int | None
    n: int
    accuracy: float | None
    parse_failure_rate: float | None  # AudioICL: answered episodes the scorer found no answer in
    error_rate: float | None
    benchmark: str = "AcousticBench"
    shots: int | None = None  # AudioICL's k
    run_dir: Path | None = field(default=None, compare=False)  # where it came from (None for references); the report reads it
    config: dict | None = field(default=None, compare=False, repr=False)  # the run's config.json, parsed (None for references)
    metrics: dict | None = field(default=None, compare=False, repr=False)  # its metrics.json, parsed, so the report reads neither again
    identity: Identity = ()  # what else must match for runs to share a cell (identity.py)
    accuracy_without_errors: float | None = None  # errors (server, judge) left out; the paper's accuracy counts them
    finished_at: str | None = field(default=None, compare=False)  # config.json's finished_at: which run is latest
    responses: Path | None = field(default=None, compare=False)  # a reference's records (a run's are in run_dir)
    truncation_rate: float | None = None  # replies cut by the token limit (status truncated), never scored


def _warn(message: str) -> None:
    print(f"skipped: {message}", file=sys.stderr)


def _line_count(path: Path) -> tuple[int, bool]:
    """Complete lines, and whether the file ends in a torn line."""
    data = path.read_bytes()
    return data.count(b"\n"), bool(data) and not data.endswith(b"\n")


def run_entry(run_dir: Path) -> Entry | None:
    """The entry of a finished run folder of either benchmark, or None (with the reason on stderr) when it is not usable."""
    if not (run_dir / METRICS).is_file():
        _warn(f"{run_dir}: no {METRICS} (the run did not finish; continue it with --resume)")
        return None
    try:
        config = json.loads((run_dir / CONFIG).read_text(encoding="utf-8"))
        metrics = json.loads((run_dir / METRICS).read_text(encoding="utf-8"))
        lines, torn = _line_count(run_dir / RESPONSES)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        _warn(f"{run_dir}: unreadable ({err})")
        return None
    expected = config.get("n_questions", config.get("n_episodes", 0))
    if torn or lines < expected:
        _warn(f"{run_dir}: {RESPONSES} is truncated ({lines} of {expected} records)")
        return None
    spec = config["spec"]
    if spec.get("benchmark") == "AudioICL":
        statuses, n = metrics["statuses"], metrics["n"]
        icl = config["audioicl"]
        return Entry(spec["model"], spec["task"], "all", icl.get("pack_manifest_sha256") or icl["meta_sha256"], spec["seed"],
                     spec.get("max_samples"), n, metrics["accuracy"], metrics["no_answer_rate"],
                     statuses.get("error", 0) / n if n else None, "AudioICL", spec["shots"], run_dir, config, metrics,
                     identity=run_identity(config),
                     accuracy_without_errors=_without_errors(metrics["correct"], n, statuses.get("error", 0)),
                     finished_at=config.get("finished_at"),
                     truncation_rate=statuses.get("truncated", 0) / n if n else None)
    scored = metrics["scored"]
    errors = scored.get("errors", round((scored["error_rate"] or 0) * scored["n"]))
    return Entry(spec["model"], spec["task"], spec["split"], config["archive"]["manifest_sha256"], spec["seed"],
                 spec.get("max_samples"), scored["n"], scored["accuracy"], scored["parse_failure_rate"], scored["error_rate"],
                 run_dir=run_dir, config=config, metrics=metrics, identity=run_identity(config),
                 accuracy_without_errors=_without_errors(scored["correct"], scored["n"], errors),
                 finished_at=config.get("finished_at"), truncation_rate=scored.get("truncation_rate") or 0.0)


def _without_errors(correct: int, n: int, errors: int) -> float | None:
    return correct / (n - errors) if n > errors else None


def reference_entries(root: Path) -> list[Entry]:
    entries = []
    for summary_path in sorted(root.rglob("summary.json")):
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        for run in summary["runs"]:
            records = [json.loads(line) for line in (summary_path.parent / run["file"]).read_text().splitlines() if line]
            scored = [r for r in records if r.get("kind", "scored") == "scored"]
            status = Counter(r["status"] for r in scored)
            n = len(scored)
            unreadable = (sum(1 for r in scored if r["status"] == "answered" and r.get("prediction") is None)
                          if summary.get("benchmark") == "AudioICL" else status["unparsed"])
            entries.append(Entry(summary["model"], summary["task"], summary["split"], summary["archive_manifest_sha256"],
                                 run["seed"], summary.get("max_samples"), n, run["accuracy"], unreadable / n if n else None,
                                 status["error"] / n if n else None, summary.get("benchmark", "AcousticBench"),
                                 summary.get("shots"), responses=summary_path.parent / run["file"],
                                 truncation_rate=status["truncated"] / n if n else None))
    return entries


def collect(results_dirs: list[Path]) -> list[Entry]:
    """Finished runs; of several runs of the same (model, identity, task, split, archive, questions, seed) the one
    that finished last counts (config.json's finished_at; the folder name where a run has none)."""
    latest: dict[tuple, Entry] = {}
    for results in results_dirs:
        for run_dir in sorted(p for p in results.iterdir() if p.is_dir() and (p / CONFIG).is_file()):
            entry = run_entry(run_dir)
            if entry:
                key = (entry.benchmark, entry.model, entry.identity, entry.task, entry.shots, entry.split,
                       entry.manifest, entry.max_samples, entry.seed)
                if key not in latest or _finish_order(entry) >= _finish_order(latest[key]):
                    latest[key] = entry
    return list(latest.values())


def _finish_order(entry: Entry) -> tuple[str, str]:
    return entry.finished_at or "", entry.run_dir.name if entry.run_dir else ""


def _responses(entry: Entry) -> Path | None:
    return entry.responses or (entry.run_dir / RESPONSES if entry.run_dir else None)


def interval_of(group: list[Entry]):
    """The cell's 95% interval over its seeds, clustered by question (seeds.py), and the questions it is worth."""
    return across_seeds([(e.accuracy, e.n, _responses(e)) for e in group])


def _mean_std(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def _labels(entries: list[Entry]) -> dict[tuple[str, Identity], str]:
    """(model, identity) -> the row name: the model, and how its identity differs where it ran in several ways."""
    by_model: dict[str, list[Identity]] = {}
    for e in entries:
        by_model.setdefault(e.model, []).append(e.identity)
    return {(model, i): model + (f" [{d}]" if d else "") for model, ids in by_model.items()
            for i, d in differences(ids).items()}


def table_rows(entries: list[Entry]) -> tuple[list[str], list[dict]]:
    """Rows (one per model, identity, split, archive) with a cell per task; runs that differ in any of these never
    share a cell. The average is over the tasks every row ran; a row missing some of the tasks is marked partial."""
    tasks = [t for t in TASKS if any(e.task == t for e in entries)] + sorted({e.task for e in entries} - set(TASKS))
    manifests: dict[tuple[str, str], set[str]] = {}
    for e in entries:
        manifests.setdefault((e.model, e.split), set()).add(e.manifest)
    groups: dict[tuple, list[Entry]] = {}
    for e in entries:  # a run on the first N questions never shares a cell with full runs
        groups.setdefault((e.model, e.identity, e.split, e.max_samples or 0, e.manifest), []).append(e)
    labels = _labels(entries)
    common = [t for t in tasks if all(any(e.task == t and e.accuracy is not None for e in g) for g in groups.values())]
    rows = []
    for (model, identity, split, max_samples, manifest), group in sorted(groups.items(), key=_row_order):
        label = labels[(model, identity)] + (f" [first {max_samples}]" if max_samples else "")
        if len(manifests[(model, split)]) > 1:
            label += f" [archive {manifest[:8]}]"
            print(f"note: {model} ({split}) has runs on {len(manifests[(model, split)])} different archives; "
                  "they are listed as separate rows", file=sys.stderr)
        cells, intervals, without = {}, {}, {}
        for task in tasks:
            runs = [e for e in group if e.task == task and e.accuracy is not None]
            accs = [e.accuracy for e in runs]
            cells[task] = (_mean_std(accs), len(accs), sum(e.n for e in runs)) if accs else None
            intervals[task] = interval_of(runs)[0] if runs else None
            errored = any(e.error_rate for e in runs)
            without[task] = mean_known([e.accuracy_without_errors for e in runs]) if errored else None
        ran = [t for t in tasks if cells[t]]
        means = [cells[t][0][0] for t in common]
        rows.append({"model": label, "split": split, "cells": cells, "interval": intervals, "without_errors": without,
                     "entries": group, "key": (model, split, max_samples, manifest), "identity": identity,
                     "average": statistics.fmean(means) if means else None, "partial": len(ran) < len(tasks),
                     "average_over": common,
                     "seeds": max(len({e.seed for e in group if e.task == t}) for t in tasks),
                     "parse": mean_known([e.parse_failure_rate for e in group]),
                     "error": mean_known([e.error_rate for e in group]),
                     "truncated": mean_known([e.truncation_rate for e in group])})
    return tasks, rows


def _model_index(model: str) -> int:
    """Registry order (as a paper table lists models), unknown models after."""
    from acousticbench.catalog import MODELS

    names = list(MODELS)
    return names.index(model) if model in names else len(names)


def _row_order(item) -> tuple:
    (model, identity, split, max_samples, manifest), _ = item
    return (_model_index(model), model, identity, split, max_samples, manifest)


def mean_known(values: list[float | None]) -> float | None:
    """The mean of the values that are known (not None); None when none is."""
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def pct(x: float | None) -> str:
    """A rate as a percentage with one decimal; '-' when unknown."""
    return "-" if x is None else f"{100 * x:.1f}"


def _split(entries: list[Entry]) -> tuple[list[Entry], list[Entry]]:
    return [e for e in entries if e.benchmark != "AudioICL"], [e for e in entries if e.benchmark == "AudioICL"]


def markdown(entries: list[Entry]) -> str:
    """A table per benchmark present; headed by the benchmark's name when both are."""
    acoustic, icl = _split(entries)
    sections = []
    if acoustic:
        sections.append(("AcousticBench", _acoustic_markdown(acoustic)))
    if icl:
        sections.append(("AudioICL", _icl_markdown(icl)))
    if len(sections) == 1:
        return sections[0][1]
    return "\n".join(f"## {name}\n\n{table}" for name, table in sections)


def _acoustic_markdown(entries: list[Entry]) -> str:
    tasks, rows = table_rows(entries)
    header = ["Model", "Split", *tasks, "Avg", "Seeds", "Parse fail %", "Truncated %", "Error %"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [cell_text(row["cells"][t], row["interval"][t], row["without_errors"][t]) for t in tasks]
        average = pct(row["average"]) + (" (partial)" if row["partial"] else "")
        lines.append("| " + " | ".join([row["model"], row["split"], *cells, average, str(row["seeds"]),
                                         pct(row["parse"]), pct(row["truncated"]), pct(row["error"])]) + " |")
    over = rows[0]["average_over"] if rows else []
    note = (f"\nAccuracy %: mean ± std over seeds, [95% interval clustered by question across seeds]; "
            f"'w/o errors': with server and judge errors left out. Avg over the tasks every row ran "
            f"({', '.join(over) or 'none'}); (partial): the row lacks some tasks.\n")
    return "\n".join(lines) + "\n" + note + _threshold_markdown(tasks, rows)


def _threshold_markdown(tasks: list[str], rows: list[dict]) -> str:
    """The 75%-correct threshold in each task's unit, mean over the seeds' own fits (metrics.json); '' when no run
    has one (references, runs before units were recorded)."""
    lines = []
    for row in rows:
        cells = []
        for task in tasks:
            fits = [(e.metrics or {}).get("psychometric") or {} for e in row["entries"] if e.task == task]
            known = [f["threshold_physical"] for f in fits if f.get("threshold_physical") is not None]
            unit = next((f["unit"] for f in fits if f.get("unit")), "")
            cells.append(f"{statistics.fmean(known):.3g} {unit}" if known else "-")
        if any(c != "-" for c in cells):
            lines.append("| " + " | ".join([row["model"], row["split"], *cells]) + " |")
    if not lines:
        return ""
    header = ["Model", "Split", *tasks]
    return ("\nThreshold at 75% correct, in each task's unit (mean over seeds):\n\n| " + " | ".join(header) + " |\n|"
            + "---|" * len(header) + "\n" + "\n".join(lines) + "\n")


def cell_text(cell, interval, without_errors) -> str:
    """'50.0 ± 1.2 [45.1, 54.9]', with '(w/o errors 52.0)' where the runs had errors; '-' for no run."""
    if not cell:
        return "-"
    (mean, std), _, _ = cell
    text = f"{pct(mean)} ± {pct(std)}" + (f" [{pct(interval.low)}, {pct(interval.high)}]" if interval else "")
    return text + (f" (w/o errors {pct(without_errors)})" if without_errors is not None else "")


def icl_rows(entries: list[Entry]) -> list[dict]:
    """One row per (model, task, k, episodes, meta file): mean +- std over seeds, in registry and task order."""
    from acousticbench.benchmarks.audioicl import TASKS as ICL_TASKS

    groups: dict[tuple, list[Entry]] = {}
    for e in entries:
        groups.setdefault((e.model, e.identity, e.task, e.shots, e.max_samples or 0, e.manifest), []).append(e)
    order = list(ICL_TASKS)
    labels = _labels(entries)
    rows = []
    for (model, identity, task, shots, max_samples, manifest), group in groups.items():
        accs = [e.accuracy for e in group if e.accuracy is not None]
        errored = any(e.error_rate for e in group)
        rows.append({"model": labels[(model, identity)] + (f" [first {max_samples}]" if max_samples else ""),
                     "task": task, "shots": shots, "identity": identity, "interval": interval_of(group)[0],
                     "without_errors": mean_known([e.accuracy_without_errors for e in group]) if errored else None,
                     "mean_std": _mean_std(accs) if accs else None, "seeds": len({e.seed for e in group}),
                     "n": sum(e.n for e in group), "entries": group, "no_answer": mean_known([e.parse_failure_rate for e in group]),
                     "error": mean_known([e.error_rate for e in group]),
                     "truncated": mean_known([e.truncation_rate for e in group]),
                     "order": (_model_index(model), model, identity, order.index(task) if task in order else
                               len(order), task, shots, max_samples, manifest)})
    return sorted(rows, key=lambda r: r["order"])


def _icl_markdown(entries: list[Entry]) -> str:
    header = ["Model", "Task", "k", "Accuracy", "Seeds", "Answers (episodes x seeds)", "No answer %", "Truncated %",
              "Error %"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in icl_rows(entries):
        cell = (row["mean_std"], row["seeds"], row["n"]) if row["mean_std"] else None
        acc = cell_text(cell, row["interval"], row["without_errors"])
        lines.append("| " + " | ".join([row["model"], row["task"], str(row["shots"]), acc, str(row["seeds"]),
                                         str(row["n"]), pct(row["no_answer"]), pct(row["truncated"]),
                                         pct(row["error"])]) + " |")
    return "\n".join(lines) + "\n"


def to_csv(entries: list[Entry]) -> str:
    acoustic, icl = _split(entries)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["benchmark", "model", "split", "task", "shots", "mean_accuracy", "std_accuracy", "n_seeds",
                     "n_items"])
    if acoustic:
        tasks, rows = table_rows(acoustic)
        for row in rows:
            for task, cell in row["cells"].items():
                if cell:
                    (mean, std), seeds, n = cell
                    writer.writerow(["AcousticBench", row["model"], row["split"], task, "", f"{mean:.6f}", f"{std:.6f}",
                                     seeds, n])
    for row in icl_rows(icl):
        if row["mean_std"]:
            mean, std = row["mean_std"]
            writer.writerow(["AudioICL", row["model"], "all", row["task"], row["shots"], f"{mean:.6f}", f"{std:.6f}",
                             row["seeds"], row["n"]])
    return out.getvalue()
