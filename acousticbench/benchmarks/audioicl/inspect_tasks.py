"""AudioICL inside inspect_ai: `inspect eval acousticbench/<Task> -T shots=K` for each of its nine tasks, the episodes
of <archive>/audioicl (`-T archive=DIR`, default ./archive as run.py) with demos and query interleaved as our backends
send them, scored strictly by the harness's own scorer (a refusal or a hedge is never right)."""
from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task

from acousticbench.benchmarks.audioicl import SHOTS, TASKS
from acousticbench.benchmarks.audioicl.benchmark import BENCHMARK
from acousticbench.benchmarks.audioicl.spec import icl_spec
from acousticbench.benchmarks.inspect_kit import inspect_error, make_task
from acousticbench.core.errors import UserError

STYLES = ("specific", "general", "none")


def icl_task(name: str, archive: str | None = None, shots: int = 1, prompt_style: str = "specific") -> Task:
    """One task's k-shot episodes in id order."""
    if shots not in SHOTS:
        raise inspect_error(UserError(f"-T shots={shots!r} is not a k of the pack: give one of {list(SHOTS)}."))
    if prompt_style not in STYLES:
        raise inspect_error(UserError(f"-T prompt_style={prompt_style!r} is not a style: give one of {list(STYLES)}."))
    spec = icl_spec(model="inspect", task=name, shots=shots, archive=Path(archive or "archive"),
                      prompt_style=prompt_style)
    return make_task(BENCHMARK, spec, name=f"audioicl_{name}_k{shots}", target=lambda episode: episode.gt,
                     metadata={"benchmark": BENCHMARK.name, "shots": shots, "prompt_style": prompt_style})


def _register(name: str):
    def factory(archive: str | None = None, shots: int = 1, prompt_style: str = "specific") -> Task:
        return icl_task(name, archive, shots, prompt_style)

    factory.__doc__ = f"AudioICL {name}: k-shot rule learning (-T shots=1..5)."
    return task(name=name)(factory)


for _name in TASKS:  # acousticbench/AudioCount, ... as inspect names them
    globals()[f"{_name}_task"] = _register(_name)
