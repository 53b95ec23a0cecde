"""How far two labelings of the same answers agree (rules against the LLM judge, or two judge models): counts, the
A/B/none confusion, Cohen's kappa and the ids they disagree on."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError
from acousticbench.benchmarks.acoustic.judge.jsonl import jsonl_rows

LABELS = ("A", "B", "none")


@dataclass(frozen=True)
class Agreement:
    """Two labelings paired by record id."""

    common: int
    only_first: int
    only_second: int
    confusion: dict[tuple[str, str], int]  # (first's label, second's label) -> count
    disagreeing: list[str]

    @property
    def agreed(self) -> int:
        return sum(n for (a, b), n in self.confusion.items() if a == b)

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa: agreement beyond what the two label frequencies give by chance (1 = all agree); None where
        both labelings give every answer the same label, so chance alone agrees on all of them (kappa is 0 / 0)."""
        first = Counter({a: 0 for a in LABELS})
        second = Counter({b: 0 for b in LABELS})
        for (a, b), n in self.confusion.items():
            first[a] += n
            second[b] += n
        same = sum(first[k] * second[k] for k in LABELS)
        if same == self.common ** 2:
            return None
        observed, chance = self.agreed / self.common, same / self.common ** 2
        return (observed - chance) / (1 - chance)


Labels = dict[str, tuple[str, tuple[Any, Any]]]  # id -> (A, B or none; its response and its trial's placement)


def read_labels(path: Path) -> Labels:
    """id -> A, B or none from a run's responses.jsonl or `judge extract` output (both carry 'id' and 'chosen'), with
    the answer it labels (its response, and an adaptive trial's placement, where the line has them)."""
    labels: Labels = {}
    for number, row in jsonl_rows(path):
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or "chosen" not in row:
            raise UserError(f"{path}:{number}: needs an 'id' string and a 'chosen' field "
                            "(a responses.jsonl of a run, or `judge extract` output of lines with ids).")
        meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
        labels[row["id"]] = (row["chosen"] if row["chosen"] in ("A", "B") else "none",
                             (row.get("response"), meta.get("adaptive")))
    return labels


def agreement(first_labels: Labels, second_labels: Labels) -> Agreement:
    """Pair two labelings by id; UserError when they share no id, or when an id names another answer in each (two
    runs' answers, or two adaptive runs' trials: not one answer labelled twice)."""
    common = sorted(first_labels.keys() & second_labels.keys())
    if not common:
        raise UserError("the two files share no record id: are they labelings of the same answers?")
    other = [i for i in common if _other(first_labels[i][1], second_labels[i][1])]
    if other:
        raise UserError(f"{len(other)} of the {len(common)} ids the two files share name other answers in each (e.g. "
                        f"{other[0]}: another response, or a trial placed elsewhere): `judge agree` compares two "
                        "labelings of the same answers; compare two runs' answers with `acousticbench compare`.")
    first = {i: label for i, (label, _) in first_labels.items()}
    second = {i: label for i, (label, _) in second_labels.items()}
    confusion = Counter((first[i], second[i]) for i in common)
    return Agreement(len(common), len(first.keys() - second.keys()), len(second.keys() - first.keys()),
                     {(a, b): confusion[(a, b)] for a in LABELS for b in LABELS},
                     [i for i in common if first[i] != second[i]])


def _other(first: tuple[Any, Any], second: tuple[Any, Any]) -> bool:
    """Whether two lines of one id hold other answers: a response, or a trial's placement, that both give and differ."""
    return any(a is not None and b is not None and a != b for a, b in zip(first, second))


def report(result: Agreement, first_name: str, second_name: str, show: int) -> str:
    """The agreement as text: counts, kappa, the confusion table, then up to `show` disagreeing ids."""
    lines = [f"{result.common} answers in both files ({result.only_first} only in {first_name}, "
             f"{result.only_second} only in {second_name})",
             f"agree on {result.agreed} ({100 * result.agreed / result.common:.1f}%), {_kappa_text(result)}",
             f"rows: {first_name}; columns: {second_name}",
             f"{'':>6}" + "".join(f"{b:>8}" for b in LABELS)]
    lines += [f"{a:>6}" + "".join(f"{result.confusion[(a, b)]:8d}" for b in LABELS) for a in LABELS]
    lines.append(f"{len(result.disagreeing)} disagreeing ids" + (":" if result.disagreeing and show else ""))
    lines += result.disagreeing[:show]
    if len(result.disagreeing) > show > 0:
        lines.append(f"... and {len(result.disagreeing) - show} more (--show N)")
    return "\n".join(lines)


def _kappa_text(result: Agreement) -> str:
    kappa = result.kappa
    if kappa is None:
        label = next(a for (a, b), n in result.confusion.items() if n)
        return (f"Cohen's kappa undefined: both files label every answer {label!r}, so chance alone agrees on all "
                "of them (0 / 0); the agreement says nothing beyond it")
    return f"Cohen's kappa {kappa:.3f}"
