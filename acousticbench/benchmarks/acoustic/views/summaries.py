"""The numbers behind AcousticBench's report tables and figures, from the leaderboard's rows and the runs' metrics:
psychometric fits per model and attribute over seeds, diagnostics over seeds, the LoRA lift. Seeds are not new
questions: counts are averaged over seeds, and diagnostics count questions."""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from acousticbench.benchmarks.acoustic.metrics import level_counts
from acousticbench.core.stats import cell_interval
from acousticbench.benchmarks.acoustic.metrics.psychometric import fit_psychometric, in_units
from acousticbench.benchmarks.entry import Entry
from acousticbench.core.records import Interval
from acousticbench.benchmarks.acoustic.records import Metrics, PsychometricFit


@dataclass(frozen=True)
class Psychometric:
    """One model (leaderboard row) on one attribute over its seeds: counts averaged over seeds (n counts questions,
    so neither the bars nor the fit's interval treat a seed as new questions), and each seed's own threshold."""

    row: str
    task: str
    points: list[tuple[int, int, float, Interval | None]]  # level, questions, correct (mean over seeds), 95% (cell_interval)
    fit: PsychometricFit | None
    # each seed's fitted threshold (metrics.json) in levels, censored where it lies beyond the tested levels ('>', 5)
    seed_thresholds: tuple[tuple[str, float] | None, ...] = ()


def _runs_of(row: dict, task: str) -> list[Entry[Metrics]]:
    """The row's finished runs of the task (references have no metrics)."""
    return [e for e in row["entries"] if e.metrics is not None and e.task == task]


def psychometric_cells(tasks: list[str], rows: list[dict]) -> list[Psychometric]:
    """A fit per (row, task) with levels on the counts averaged over seeds."""
    jobs = []
    for row in rows:
        for task in tasks:
            runs = _runs_of(row, task)
            counts = level_counts(*(e.metrics.by_level for e in runs))
            if counts:
                fits = [e.metrics.psychometric for e in runs]
                mean = {lv: (round(n / len(runs)), k / len(runs)) for lv, (n, k) in counts.items()}
                jobs.append((row["model"] + ("" if row["split"] == "all" else f" ({row['split']})"), task, mean, fits))
    # one after another: in a process pool each worker's BLAS threads fight over the same cores
    out = []
    for label, task, counts, fits in jobs:
        fit = in_units(fit_psychometric(counts), *_steps(fits))
        points = [(lv, n, k, cell_interval(k, n)) for lv, (n, k) in counts.items()]
        out.append(Psychometric(label, task, points, fit, tuple(f.censored(physical=False) if f else None for f in fits)))
    return out


def _steps(fits: list[PsychometricFit | None]) -> tuple[dict[int, float], str | None]:
    """level -> step and the unit, from the runs' own fits (metrics.json), when they carry them."""
    for f in fits:
        if f and f.steps and f.unit:
            return {lv: st for lv, st in zip(f.levels, f.steps) if st}, f.unit
    return {}, None


DIAGNOSTICS = (("catch_accuracy", "n_catch"), ("identical_p_a", "n_identical"), ("position_p_a", "n_position_wrong"),
               ("swap_consistency", "n_swap_pairs"))
SUMMED = {"n_position_wrong"}  # wrong answers differ from seed to seed: their count is summed, not one seed's


def diagnostics_rows(tasks: list[str], rows: list[dict]) -> list[dict]:
    """Per (row, task): each diagnostic's mean over seeds (metrics.json) and what it is over: the questions (one
    seed's count: the same 25 catch trials asked under three seeds are still 25 questions), or for position bias the
    wrong answers of every seed."""
    out = []
    for row in rows:
        for task in tasks:
            diags = [e.metrics.diagnostics for e in _runs_of(row, task)]
            if not diags:
                continue
            cell = {"model": row["model"], "split": row["split"], "task": task, "seeds": len(diags)}
            for value, count in DIAGNOSTICS:
                known = [getattr(d, value) for d in diags if getattr(d, value) is not None]
                cell[value] = statistics.fmean(known) if known else None
                cell[count] = (sum if count in SUMMED else max)(getattr(d, count) for d in diags)
            if any(cell[count] for _, count in DIAGNOSTICS):  # runs of the first N questions may have no probes
                out.append(cell)
    return out


def lora_rows(tasks: list[str], rows: list[dict]) -> list[dict]:
    """A finetune '<base>+<adapter>' against its base, both on --split eval with the same questions and pack."""
    eval_rows = {(*row["key"], row["identity"]): row for row in rows if row["split"] == "eval"}
    out = []
    for (model, split, max_samples, manifest, identity), row in eval_rows.items():
        base = eval_rows.get((model.split("+", 1)[0], split, max_samples, manifest, identity)) if "+" in model else None
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
