"""The runs the API hands back: `Run`, one per model x task (x variant) x seed, the same whether evaluate() just made it
or load_runs() read it from its folder, and `Evaluation`, the runs of one evaluate() call with its exit status."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError
from acousticbench.core.settings import RunSpec

NOT_FINISHED = "not finished: its folder has no metrics.json (run the same command with --resume)"


@dataclass(frozen=True)
class Run:
    """One finished (or failed) run of the sweep: what the command line prints a line for."""

    model: str
    benchmark: str  # "AcousticBench", "AudioICL"
    cell: str  # the task, and for a benchmark with variants the variant: "rad", "AudioCount/k3"
    seed: int
    run_dir: Path | None  # its folder: responses.jsonl, config.json, metrics.json
    accuracy: float | None  # the benchmark's headline (None when the run failed or nothing was scored)
    n: int  # what `accuracy` is over (questions, episodes)
    metrics: Any = field(repr=False)  # metrics.json as its pydantic model; None when the run failed
    records: list = field(repr=False)  # responses.jsonl as pydantic records, sorted by id
    error: str | None = None  # why the run stopped, when it did
    # the run's settings, options, model, task and seed; the sweep's (every model of the command) when evaluate()
    # made it, the run's own when read back: not part of what makes two runs the same
    spec: RunSpec | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Evaluation:
    """Every run of one evaluate() call, in the order they ran, and the command line's exit status for them."""

    runs: list[Run]
    status: int  # 0: every run finished within its error budget; 1: something needs attention

    def __iter__(self):
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def __getitem__(self, i: int) -> Run:
        return self.runs[i]


def run_of(result) -> Run:
    """The Run of a sweep's RunResult."""
    accuracy, n = result.benchmark.headline(result.metrics) if result.metrics is not None else (None, 0)
    return Run(result.spec.model, result.spec.benchmark, result.spec.cell, result.spec.seed, result.run_dir, accuracy,
               n, result.metrics, sorted(result.records, key=lambda r: r.id), result.error, result.spec)


def load_runs(*folders: Path | str) -> list[Run]:
    """The runs of finished (or stopped) run folders: each folder a run folder or one holding them (a --results-dir,
    searched below), in the order they started; the same Run objects evaluate() returned for them."""
    found: dict[Path, None] = {}
    for given in map(Path, folders or ("results",)):
        if not given.is_dir():
            raise UserError(f"{given} is not a folder: give a run folder or a --results-dir.")
        found.update(dict.fromkeys(sorted(c.parent for c in given.rglob("config.json")
                                          if (c.parent / "responses.jsonl").is_file())))
    return [run for _, run in sorted((_read_run(folder) for folder in found), key=lambda pair: pair[0])]


def _read_run(folder: Path) -> tuple[str, Run]:
    """(when it started, the Run) of one run folder."""
    from acousticbench.benchmarks import benchmark_of_config, spec_from_config
    from acousticbench.run.results import METRICS, RESPONSES, read_config, read_records
    from acousticbench.core.readers import read_json

    config = read_config(folder)
    bench = benchmark_of_config(config)
    spec = spec_from_config(config)
    metrics_path = folder / METRICS
    metrics = (bench.metrics_type.model_validate(read_json(
        metrics_path, "metrics.json", "run the same command with --resume to write it again", bench.metrics_type))
        if metrics_path.is_file() else None)
    accuracy, n = bench.headline(metrics) if metrics is not None else (None, 0)
    records = sorted(read_records(folder / RESPONSES, bench.record_type), key=lambda r: r.id)
    return str(config.get("started_at", "")), Run(spec.model, spec.benchmark, spec.cell, spec.seed, folder, accuracy, n,
                                                  metrics, records, None if metrics is not None else NOT_FINISHED, spec)
