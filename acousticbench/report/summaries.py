"""The numbers behind the report's tables and figures, from the leaderboard's rows and the runs' records: pooled
psychometric fits per model and attribute, diagnostics over seeds, the LoRA lift, AudioICL accuracy by k."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from acousticbench.benchmarks.acoustic.metrics import level_counts
from acousticbench.stats import wilson_interval
from acousticbench.benchmarks.acoustic.psychometric import fit_psychometric, in_units
from acousticbench.records import Interval
from acousticbench.benchmarks.acoustic.records import PsychometricFit
from acousticbench.report.gather import Run


@dataclass(frozen=True)
class Psychometric:
    """One model (leaderboard row) on one attribute over its seeds: counts averaged over seeds (n counts questions,
    so neither the bars nor the fit's interval treat a seed as new questions), and each seed's own threshold."""

    row: str
    task: str
    points: list[tuple[int, int, float, Interval | None]]  # level, questions, correct (mean over seeds), Wilson 95%
    fit: PsychometricFit | None
    seed_thresholds: tuple[float | None, ...] = ()  # each seed's fitted threshold (metrics.json), level units


def _runs_of(row: dict, by_dir: dict) -> list[Run]:
    return [by_dir[e.run_dir] for e in row["entries"] if e.run_dir in by_dir]


def psychometric_cells(tasks: list[str], rows: list[dict], by_dir: dict) -> list[Psychometric]:
    """A pooled fit per (row, task) with levels (each takes ~0.02-0.1 s)."""
    jobs = []
    for row in rows:
        runs = _runs_of(row, by_dir)
        for task in tasks:
            fits = [run.metrics.get("psychometric") or {} for run in runs if run.entry.task == task]
            counts = level_counts(*(run.metrics.get("by_level") or {} for run in runs if run.entry.task == task))
            if counts:
                seeds = len(fits)
                mean = {lv: (round(n / seeds), k / seeds) for lv, (n, k) in counts.items()}
                jobs.append((row["model"] + ("" if row["split"] == "all" else f" ({row['split']})"), task, mean,
                             fits))
    # one after another: a process pool was 5x slower here (each worker's BLAS threads fought over the 2 cores)
    out = []
    for label, task, counts, fits in jobs:
        fit = in_units(fit_psychometric(counts), *_steps(fits))
        points = [(lv, n, k, wilson_interval(k, n)) for lv, (n, k) in counts.items()]
        out.append(Psychometric(label, task, points, fit, tuple(f.get("threshold") for f in fits)))
    return out


def _steps(fits: list[dict]) -> tuple[dict[int, float], str | None]:
    """level -> step and the unit, from the runs' own fits (metrics.json), when they carry them."""
    for f in fits:
        if f.get("steps") and f.get("unit"):
            return {lv: st for lv, st in zip(f["levels"], f["steps"]) if st}, f["unit"]
    return {}, None


DIAGNOSTICS = (("catch_accuracy", "n_catch"), ("identical_p_a", "n_identical"), ("swap_consistency", "n_swap_pairs"))


def diagnostics_rows(tasks: list[str], rows: list[dict], by_dir: dict) -> list[dict]:
    """Per (row, task): each diagnostic's mean over seeds (metrics.json) and the questions behind it (one seed's
    count: the same 25 catch trials asked under three seeds are still 25 questions)."""
    out = []
    for row in rows:
        for task in tasks:
            diags = [run.metrics.get("diagnostics") or {} for run in _runs_of(row, by_dir) if run.entry.task == task]
            if not diags:
                continue
            cell = {"model": row["model"], "split": row["split"], "task": task, "seeds": len(diags)}
            for value, count in DIAGNOSTICS:
                known = [d[value] for d in diags if d.get(value) is not None]
                cell[value] = statistics.fmean(known) if known else None
                cell[count] = max(d.get(count, 0) for d in diags)
            if any(cell[count] for _, count in DIAGNOSTICS):  # runs of the first N questions may have no probes
                out.append(cell)
    return out


def lora_rows(tasks: list[str], rows: list[dict]) -> list[dict]:
    """A finetune '<base>+<adapter>' against its base, both on --split eval with the same questions and pack."""
    eval_rows = {row["key"]: row for row in rows if row["split"] == "eval"}
    out = []
    for (model, split, max_samples, manifest), row in eval_rows.items():
        base = eval_rows.get((model.split("+", 1)[0], split, max_samples, manifest)) if "+" in model else None
        if base is None:
            continue
        cells = {}
        for task in tasks:
            tuned, plain = row["cells"].get(task), base["cells"].get(task)
            cells[task] = (tuned[0][0], plain[0][0], tuned[0][0] - plain[0][0]) if tuned and plain else None
        lifts = [c[2] for c in cells.values() if c]
        out.append({"model": row["model"], "base": base["model"], "cells": cells,
                    "lift": statistics.fmean(lifts) if lifts else None})
    return out


def kshot_series(icl_rows: list[dict]) -> dict[str, dict[str, list[tuple[int, float, float, int]]]]:
    """task -> model -> [(k, mean, std, seeds)] sorted by k: the points of the k-shot curves."""
    series: dict[str, dict[str, list]] = {}
    for row in icl_rows:
        if row["mean_std"]:
            mean, std = row["mean_std"]
            series.setdefault(row["task"], {}).setdefault(row["model"], []).append((row["shots"], mean, std, row["seeds"]))
    for models in series.values():
        for points in models.values():
            points.sort()
    return series
