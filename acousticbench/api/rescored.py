"""What `rerun` and `rejudge` hand back for each run they changed: its statuses before and after, the line the
command prints, and the run as it now is; and how their keyword options map onto each benchmark's own."""
from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acousticbench.api.runs import Run, load_runs


@dataclass(frozen=True)
class Rescored:
    """One run asked or labelled again."""

    responses: Path  # its responses.jsonl, rewritten (the first original kept as responses.jsonl.orig)
    before: dict[str, int]  # statuses ("answered", "unparsed", "refused", "error") and "null answers", before
    after: dict[str, int]
    line: str  # what the command prints for it: 'PATH: answered 7 -> 8, refused 0 -> 0, error 1 -> 0, ...'
    run: Run  # the run as it now is (load_runs)


def rescored(run, records: list) -> Rescored:
    """The Rescored of a tools.rescore.RunFile whose records are now `records` (already saved)."""
    from acousticbench.tools.rescore import change_line, status_counts

    def counted(of: list) -> dict[str, int]:  # every status named, a zero included
        counts = status_counts(run, of)
        return {**dict.fromkeys(("answered", "unparsed", "refused", "error", "null answers"), 0), **counts}

    return Rescored(run.path, counted(run.records), counted(records), change_line(str(run.path), run, records),
                    load_runs(run.path.parent)[0])


def benchmark_options(declared: Callable[[Any], Sequence[Any]],
                      given: dict[str, Any]) -> tuple[list[Any], argparse.Namespace]:
    """Every benchmark's options of a tool (`declared` picks them from a benchmark, as its flags are made) and those
    `given` by name; a name none declares is a TypeError naming every one."""
    from acousticbench.benchmarks import BENCHMARKS, get_benchmark

    options = {o.dest: o for name in BENCHMARKS for o in declared(get_benchmark(name))}
    unknown = sorted(set(given) - set(options))
    if unknown:
        raise TypeError(f"unknown option(s) {', '.join(unknown)}; the benchmarks' own are: {', '.join(sorted(options))}")
    return list(options.values()), argparse.Namespace(**given)
