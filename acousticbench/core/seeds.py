"""Numbers of one cell across its seeds, read from the runs' responses.jsonl: each seed's Wilson interval and the
interval clustered by question (the same question asked under another seed is not a new trial)."""
from __future__ import annotations

import json
from pathlib import Path

from acousticbench.core.records import Interval
from acousticbench.core.stats import clustered_interval, wilson_interval


def scored_outcomes(responses: Path) -> list[tuple[str, float]]:
    """(question id, 1.0 if correct else 0.0) for every scored record of a run (AudioICL: every episode)."""
    out = []
    for line in responses.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            if data.get("kind", "scored") == "scored":
                out.append((data["id"], 1.0 if data.get("correct") else 0.0))
    return out


def across_seeds(runs: list[tuple[float | None, int, Path | None]]) -> tuple[Interval | None, float | None]:
    """The 95% interval of a cell's accuracy over its runs (accuracy, n, responses.jsonl or None), and the
    effective number of questions it is worth. One run: its Wilson interval. Several: clustered by question; where a
    run's records cannot be read (a reference summary), the Wilson interval of the mean accuracy over one seed's n
    questions, which is never narrower than the clustered one (the design effect is at most the number of seeds)."""
    known = [(acc, n, path) for acc, n, path in runs if acc is not None and n]
    if not known:
        return None, None
    if len(known) == 1:
        acc, n, _ = known[0]
        return wilson_interval(round(acc * n), n), float(n)
    if all(path is not None and path.is_file() for _, _, path in known):
        scores = [score for _, _, path in known for score in scored_outcomes(path)]
        return clustered_interval(scores)
    mean, n = sum(a for a, _, _ in known) / len(known), max(n for _, n, _ in known)
    return wilson_interval(mean * n, n), float(n)


def per_seed(runs: list[tuple[int, float | None, int]]) -> list[tuple[int, Interval | None]]:
    """Each seed's own Wilson interval: (seed, interval) in seed order."""
    return [(seed, wilson_interval(round(acc * n), n) if acc is not None else None) for seed, acc, n in sorted(runs)]


def interval_of(entries) -> Interval | None:
    """The 95% interval of a cell's entries (benchmarks/entry.py) over their seeds, clustered by question."""
    runs = [(e.accuracy, e.n, e.responses or (e.run_dir / "responses.jsonl" if e.run_dir else None)) for e in entries]
    return across_seeds(runs)[0]


def without_errors(entries) -> float | None:
    """The mean accuracy with errors left out, where any of the runs had errors; None where none had."""
    known = [e.accuracy_without_errors for e in entries if e.error_rate and e.accuracy_without_errors is not None]
    return sum(known) / len(known) if known else None
