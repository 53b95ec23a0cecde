"""The report's model-against-model view: for every two models and every task, the answers paired by question id
and seed, the questions only one of them gets right, and McNemar's exact p on those discordant pairs."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

from acousticbench.core.stats import mcnemar_exact


@dataclass(frozen=True)
class Scored:
    """One scored answer, as the pairing needs it: where it sits in the browser's columns, and whether it is right."""

    index: int  # the record's row in the answer browser
    model: str
    task: str  # the task as the browser names it (with its variant: 'AudioCount k=3')
    item: tuple  # what must match for two answers to be a pair: the pack, the question id, the seed
    correct: bool


def _by_item(answers: list[Scored]) -> dict[tuple[str, str], dict[tuple, Scored]]:
    """(model, task) -> item -> answer; of several runs of one model on the same item, the first listed is kept."""
    out: dict[tuple[str, str], dict[tuple, Scored]] = {}
    for a in answers:
        out.setdefault((a.model, a.task), {}).setdefault(a.item, a)
    return out


def _deltas(values: list[int]) -> list[int]:
    """Each value minus the one before: record indices mostly rise by a few, so the page carries short numbers."""
    return [v - u for u, v in zip([0, *values], values)]


def paired_data(answers: list[Scored]) -> dict[str, Any]:
    """models, tasks, and for each model pair (i < j, as 'i,j') a row per task both ran: [task, pairs matched, A's
    answers unpaired, B's unpaired, p, only A right, only B right], each list as [A's records, B's] (_deltas)."""
    models = list(dict.fromkeys(a.model for a in answers))
    tasks = list(dict.fromkeys(a.task for a in answers))
    items = _by_item(answers)
    cells: dict[str, list] = {}
    for (i, a), (j, b) in combinations(enumerate(models), 2):
        rows = []
        for t, task in enumerate(tasks):
            left, right = items.get((a, task)), items.get((b, task))
            if not left or not right:
                continue
            shared = [(left[k], right[k]) for k in left if k in right]
            only_a = [(x, y) for x, y in shared if x.correct and not y.correct]
            only_b = [(x, y) for x, y in shared if y.correct and not x.correct]
            p = mcnemar_exact(len(only_a), len(only_b))
            rows.append([t, len(shared), len(left) - len(shared), len(right) - len(shared), p,
                         *([_deltas([x.index for x, _ in found]), _deltas([y.index for _, y in found])]
                           for found in (only_a, only_b))])
        if rows:
            cells[f"{i},{j}"] = rows
    return {"models": models, "tasks": tasks, "cells": cells}
