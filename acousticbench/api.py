"""The Python API: `acousticbench.evaluate(...)` runs what `python run.py --model ... --task ...` runs, through the
same flags, specs and sweep, and hands back each run's records and metrics."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError

# settings that are commands of run.py, not settings of a run: evaluate() never takes them
_COMMANDS = {"list_models", "list_tasks", "verify_checksums", "build_archive", "zip", "extract", "report", "out",
             "embed_audio", "promote_reference", "build_audioicl", "export_dataset", "import_dataset", "help", "dry_run"}


@dataclass(frozen=True)
class Run:
    """One finished (or failed) run of the sweep: what run.py prints a line for."""

    model: str
    benchmark: str  # "AcousticBench", "AudioICL"
    cell: str  # the task, and for AudioICL its k: "rad", "AudioCount k=3"
    seed: int
    run_dir: Path | None  # its folder: responses.jsonl, config.json, metrics.json, as run.py writes them
    accuracy: float | None  # the benchmark's headline (None when the run failed or nothing was scored)
    n: int  # what `accuracy` is over (questions, episodes)
    metrics: Any = field(repr=False)  # metrics.json as its pydantic model; None when the run failed
    records: list = field(repr=False)  # responses.jsonl as pydantic records, sorted by id
    error: str | None = None  # why the run stopped, when it did
    spec: Any = field(default=None, repr=False)  # the frozen settings the CLI builds for it (RunSpec, ICLRunSpec)


@dataclass(frozen=True)
class Evaluation:
    """Every run of one evaluate() call, in the order run.py runs them, and the exit status run.py would give."""

    runs: list[Run]
    status: int  # 0: every run finished within its error budget; 1: something needs attention (as run.py)

    def __iter__(self):
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def __getitem__(self, i: int) -> Run:
        return self.runs[i]


def _flag_values(name: str, value: Any) -> list[str]:
    """One setting as run.py's flags: True -> the flag, a list -> a comma list, None/False -> nothing."""
    flag = "--" + name.replace("_", "-")
    if value is None or value is False:
        return []
    if value is True:
        return [flag]
    if isinstance(value, (list, tuple)):
        return [flag, ",".join(str(v) for v in value)]
    return [flag, str(value)]


def arguments(model: str | Sequence[str], task: str | Sequence[str], seeds: int | Sequence[int],
              settings: dict[str, Any]):
    """The argparse namespace run.py would make of the same flags: every value parsed and checked by its parser."""
    from acousticbench.cli import build_parser

    parser = build_parser()
    known = {a.dest for a in parser._actions} - _COMMANDS - {"model", "task", "seed", "seeds"}
    unknown = sorted(set(settings) - known)
    if unknown:
        raise TypeError(f"evaluate() got unknown setting(s) {', '.join(unknown)}; it takes run.py's run flags as "
                        f"keywords: {', '.join(sorted(known))}")

    def refuse(message: str):  # argparse's own check, raised instead of exiting the caller's process
        raise UserError(message)

    parser.error = refuse
    argv = _flag_values("model", [model] if isinstance(model, str) else list(model))
    argv += _flag_values("task", [task] if isinstance(task, str) else list(task))
    argv += _flag_values("seeds", [seeds] if isinstance(seeds, int) else list(seeds))
    for name, value in settings.items():
        argv += _flag_values(name, value)
    return parser.parse_args(argv)


def evaluate(model: str | Sequence[str], task: str | Sequence[str] = "all", seeds: int | Sequence[int] = 42,
             **settings: Any) -> Evaluation:
    """The implementation of acousticbench.evaluate (its docstring says what it does)."""
    from acousticbench.cli import commands
    from acousticbench.run.checks import load_env_file
    from acousticbench.cli import check_run_settings, specs_from_args

    args = arguments(model, task, seeds, settings)
    load_env_file()  # as run.py: .env read, real environment variables win
    check = check_run_settings(args)
    results: list = []
    status = commands.run(specs_from_args(args), dry_run=False, reference=check, args=args, results_out=results)
    runs = []
    for r in results:
        accuracy, n = r.benchmark.headline(r.metrics) if r.metrics is not None else (None, 0)
        runs.append(Run(r.spec.model, r.spec.benchmark, r.spec.cell, r.spec.seed, r.run_dir, accuracy, n, r.metrics,
                        list(r.records), r.error, r.spec))
    return Evaluation(runs, status)
