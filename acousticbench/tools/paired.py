"""Two runs on the same questions: agreement, the flip table, and McNemar's exact test."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from acousticbench.core.errors import UserError
from acousticbench.benchmarks import Benchmark, benchmark_of_config, benchmark_of_line
from acousticbench.run.results import CONFIG, RESPONSES, read_config, read_records
from acousticbench.core.stats import mcnemar_exact


@dataclass(frozen=True)
class PairedComparison:
    n: int
    agree: int
    flips: Counter  # (label in A, label in B) -> count, for the items where they differ
    accuracy_a: float | None
    accuracy_b: float | None
    only_a_correct: int
    only_b_correct: int
    label: str  # what was compared: the benchmark's label field (Benchmark.label_field)
    items: str  # what the items are called (Benchmark.item_noun)

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.only_a_correct, self.only_b_correct)

    def lines(self, name_a: str, name_b: str) -> list[str]:
        def pct(x: float | None) -> str:
            return "n/a" if x is None else f"{100 * x:.1f}%"

        out = [f"{self.items.capitalize()} in both runs: {self.n}",
               f"Agreement on {self.label}: {self.agree}/{self.n} ({pct(self.agree / self.n if self.n else None)})",
               f"Accuracy (scored): run A {pct(self.accuracy_a)}, run B {pct(self.accuracy_b)}",
               f"Changed answers (run A's {self.label} -> run B's):"]
        out += [f"  {_label(a)} -> {_label(b)}: {count}" for (a, b), count in sorted(self.flips.items(), key=str)] or ["  none"]
        out.append(f"McNemar exact test: only run A right {self.only_a_correct}, only run B right {self.only_b_correct}, "
                   f"p = {self.p_value:.4g}")
        out.append(f"run A: {name_a}")
        out.append(f"run B: {name_b}")
        return out


def _label(label: str | None) -> str:
    return "null" if label is None else label


def load_run(path: Path, torn: list | None = None) -> tuple[list, Benchmark]:
    """A run folder or its responses.jsonl, with its benchmark (from config.json beside it, else its records); a last
    line a crash cut is collected in `torn` (readers.TornLine) for the caller to name."""
    file = path / RESPONSES if path.is_dir() else path
    if not file.is_file():
        raise UserError(f"{path} is not a run folder or a responses.jsonl file.")
    if (file.parent / CONFIG).is_file():
        bench = benchmark_of_config(read_config(file.parent))
        return read_records(file, bench.record_type, torn), bench
    try:  # a responses.jsonl on its own: its first record names its benchmark
        first = json.loads(next((line for line in file.read_bytes().splitlines() if line.strip()), b"{}"))
        bench = benchmark_of_line(first)
    except (ValueError, AttributeError) as err:
        raise UserError(f"{file} is not a run's responses.jsonl ({type(err).__name__}): pass a run folder or its "
                        "responses.jsonl.") from None
    return read_records(file, bench.record_type, torn), bench


def compare_runs(a: list, b: list, bench: Benchmark) -> PairedComparison:
    """Paired comparison on the items both runs answered: agreement on the benchmark's label, changed answers, and
    McNemar's exact test over the items it scores."""
    label = bench.label_field
    by_id = {r.id: r for r in b}
    pairs = [(r, by_id[r.id]) for r in a if r.id in by_id]
    if not pairs:
        raise UserError("the two runs share no item ids: are they runs of the same task?")
    answer = lambda r: getattr(r, label)  # noqa: E731
    outcomes = [(bench.outcome(x.model_dump()), bool(bench.outcome(y.model_dump()))) for x, y in pairs]
    scored = [(bool(x), y) for x, y in outcomes if x is not None]
    return PairedComparison(
        n=len(pairs),
        agree=sum(1 for x, y in pairs if answer(x) == answer(y)),
        flips=Counter((answer(x), answer(y)) for x, y in pairs if answer(x) != answer(y)),
        accuracy_a=sum(x for x, _ in scored) / len(scored) if scored else None,
        accuracy_b=sum(y for _, y in scored) / len(scored) if scored else None,
        only_a_correct=sum(1 for x, y in scored if x and not y),
        only_b_correct=sum(1 for x, y in scored if y and not x),
        label=label, items=bench.item_noun,
    )
