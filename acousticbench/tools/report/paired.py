"""The report's model-against-model view: for every two rows (a model run one way) and every task both ran, the
questions paired by id on the same pack with seeds averaged within a question (tools/model_grid.py), the difference
with its interval, the sign-flip p and Benjamini-Hochberg's q over every comparison in the report, and the questions
each side did better on, linked to their answers."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acousticbench.core.significance import METHOD
from acousticbench.tools.model_grid import FDR, CellTest, grid_tests


@dataclass(frozen=True)
class Scored:
    """One scored answer, as the pairing needs it: where it sits in the browser's columns, and whether it is right."""

    index: int  # the record's row in the answer browser
    model: str  # the row's name (model_grid.row_names): runs of one model made differently are different rows
    task: str  # the task as the browser names it (with its variant: 'AudioCount k=3')
    item: tuple  # what must match for two answers to pair: the pack and the question id
    seed: int
    correct: bool


def _linked(test: CellTest, index: dict[tuple, int], answers: dict) -> tuple[list, list]:
    """The questions A did better on and those B did, each as [A's record indices, B's] over the seeds used."""
    a_side, b_side = answers[test.a, test.cell], answers[test.b, test.cell]
    better: tuple[list, list] = ([], [])
    for item, (ra, na, rb, nb) in zip(test.pairing.questions, test.pairing.counts):
        if ra * nb == rb * na:
            continue
        seeds_a = seeds_b = [s for s in test.pairing.seeds if s in a_side[item] and s in b_side[item]]
        if not test.pairing.seeds:
            seeds_a, seeds_b = sorted(a_side[item]), sorted(b_side[item])
        found = ([index[test.a, test.cell, item, s] for s in seeds_a], [index[test.b, test.cell, item, s] for s in seeds_b])
        better[0 if ra * nb > rb * na else 1].append(found)
    return better


def paired_data(scored: list[Scored], nouns: dict[str, str]) -> dict[str, Any]:
    """models (row names), tasks (with what their items are called, `nouns`: task -> 'questions'), and for each pair (i < j, as 'i,j') a row per task both ran: [task, questions
    paired, seeds used, A's questions unpaired, B's, A's accuracy, B's, interval low, high, p, q, A better, B better]
    (each 'better' a list of [A's record indices, B's]); the method and FDR the page states."""
    models = list(dict.fromkeys(s.model for s in scored))
    tasks = list(dict.fromkeys(s.task for s in scored))
    answers: dict[tuple[str, str], dict] = {}
    index: dict[tuple, int] = {}
    for s in scored:
        answers.setdefault((s.model, s.task), {}).setdefault(s.item, {})[s.seed] = s.correct
        index[s.model, s.task, s.item, s.seed] = s.index
    tests = grid_tests(answers, nouns)
    cells: dict[str, list] = {}
    for test in tests:
        r, p = test.result, test.pairing
        cells.setdefault(f"{models.index(test.a)},{models.index(test.b)}", []).append(
            [tasks.index(test.cell), r.questions, list(p.seeds), p.unpaired_a, p.unpaired_b, r.accuracy_a,
             r.accuracy_b, r.interval.low, r.interval.high, r.p_value, test.q, *_linked(test, index, answers)])
    return {"models": models, "tasks": tasks, "nouns": [nouns.get(t, "questions") for t in tasks], "cells": cells, "tests": len(tests), "fdr": FDR, "method": METHOD}
