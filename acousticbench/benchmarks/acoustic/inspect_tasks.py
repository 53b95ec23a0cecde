"""AcousticBench inside inspect_ai: `inspect eval acousticbench/<code>` for each of its eight tasks, on the scored
questions of a pack (`-T archive=DIR`, default ./archive as run.py; `-T split=eval`), labelled by the harness's
strict rules (an answer they cannot read is NOANSWER, never a guess)."""
from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task

from acousticbench.benchmarks.acoustic.benchmark import BENCHMARK
from acousticbench.benchmarks.acoustic.spec import acoustic_spec
from acousticbench.benchmarks.acoustic.tasks import TASKS
from acousticbench.benchmarks.inspect_kit import inspect_error, make_task
from acousticbench.core.errors import UserError

SPLITS = ("all", "train", "eval")


def acoustic_task(code: str, archive: str | None = None, split: str = "all") -> Task:
    """One task's scored questions (diagnostic items have no right answer to credit), in id order."""
    if split not in SPLITS:
        raise inspect_error(UserError(f"-T split={split!r} is not a split: give all, train or eval."))
    spec = acoustic_spec(model="inspect", task=code, split=split, archive=Path(archive or "archive"), judge="rules")
    return make_task(BENCHMARK, spec, name=f"acousticbench_{code}", target=lambda q: q.answer or "",
                     keep=lambda q: q.kind == "scored", metadata={"benchmark": BENCHMARK.name, "split": split})


def _register(code: str):
    def factory(archive: str | None = None, split: str = "all") -> Task:
        return acoustic_task(code, archive, split)

    factory.__doc__ = f"AcousticBench {TASKS[code].title}: {TASKS[code].question}"
    return task(name=code)(factory)


for _code in TASKS:  # acousticbench/pit, acousticbench/lou, ... as inspect names them
    globals()[f"{_code}_task"] = _register(_code)
