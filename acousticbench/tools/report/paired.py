"""The report's model-against-model view: for every two rows (a model run one way) and every task both ran, the
questions paired by id on the same pack with seeds averaged within a question (tools/model_grid.py), the difference
with its interval, the sign-flip p and Benjamini-Hochberg's q over every comparison in the report, and how many
questions each side did better on (the page lists them from the records, linked to their answers)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import permutations
from typing import Any

from acousticbench.core.manifest import differences
from acousticbench.core.significance import METHOD
from acousticbench.tools.model_grid import FDR, grid_tests


@dataclass(frozen=True)
class Scored:
    """One scored answer, as the pairing needs it: whose, on what, and whether it is right."""

    model: str  # the row's name (model_grid.row_names): runs of one model made differently are different rows
    task: str  # the task as the browser names it (with its variant: 'AudioCount k=3')
    item: tuple  # what must match for two answers to pair: the pack and the question id
    seed: int
    correct: bool


def paired_data(scored: Iterable[Scored], nouns: dict[str, str], manifests: dict[str, dict],
                left_out: str = "") -> dict[str, Any]:
    """models (row names), tasks (with what their items are called, `nouns`: task -> 'questions'), and for each pair
    (i < j, as 'i,j') a row per task both ran: [task, questions paired, seeds used, A's questions unpaired, B's, A's
    accuracy, B's, interval low, high, p, q, questions A did better on, B, the difference detectable at 80% power
    (core/power.py, from the spread seen; null where none can be given)]; for each ordered pair 'i,j' of rows that
    both have a serving manifest (`manifests`: model_grid.row_manifests), the facts in which they were served
    otherwise, as i's value -> j's ([] when alike); the method and FDR the page states. The
    page lists those questions itself, from the records (each run names its row and task; `paired` marks a record
    counted here); `left_out`: the line naming the runs that pair with none (model_grid.model_rows). `scored` is read
    once (a generator serves)."""
    answers: dict[tuple[str, str], dict] = {}
    for s in scored:  # one pass, never held as a list: a lab's folder has millions of scored answers
        answers.setdefault((s.model, s.task), {}).setdefault(s.item, {})[s.seed] = s.correct
    models = list(dict.fromkeys(model for model, _ in answers))  # in the order the answers came, as before
    tasks = list(dict.fromkeys(task for _, task in answers))
    tests = grid_tests(answers, nouns)
    cells: dict[str, list] = {}
    for test in tests:
        r, p = test.result, test.pairing
        cells.setdefault(f"{models.index(test.a)},{models.index(test.b)}", []).append(
            [tasks.index(test.cell), r.questions, list(p.seeds), p.unpaired_a, p.unpaired_b, r.accuracy_a,
             r.accuracy_b, r.interval.low, r.interval.high, r.p_value, test.q, r.a_better, r.b_better, r.detectable])
    served = {i: manifests.get(model) for i, model in enumerate(models)}
    differ = {f"{i},{j}": differences(served[i], served[j]) for i, j in permutations(served, 2)
              if served[i] is not None and served[j] is not None}
    return {"models": models, "tasks": tasks, "nouns": [nouns.get(t, "questions") for t in tasks], "cells": cells,
            "served": differ, "tests": len(tests), "fdr": FDR, "method": METHOD, "left_out": left_out}
