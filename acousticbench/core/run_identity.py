"""What a run is, read the same way by every tool from its config.json: a real run, an audio control of one (which
audio it heard instead), or a variant of the plain run (demo order, first N, prompt style, scoring), with the model,
task and seed it belongs to. A control or a variant is named as such wherever it is shown and never pooled with, nor
shown as, the model's real runs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["real", "control", "variant"]


@dataclass(frozen=True)
class RunIdentity:
    """One run's identity: whose run it is, on what, and what kind of run (config.json's spec)."""

    benchmark: str
    model: str
    task: str
    seed: int
    variant: int | None = None  # the benchmark's variant inside a task (a number of shots), part of the task's cell
    cell: str = ""  # the task with its variant, as tables name it ('rad', 'AudioCount k=3')
    control: str | None = None  # the audio heard instead of the real clips (core/audio_controls.py); None: the real one
    first: int | None = None  # --max-samples: only the first N questions
    variants: tuple[tuple[str, str], ...] = ()  # settings off their defaults that ask another thing (demo order)

    @property
    def kind(self) -> Kind:
        return "control" if self.control else "variant" if self.variants or self.first else "real"

    def tags(self, first: bool = True) -> tuple[str, ...]:
        """How the run differs from the plain real run, in a row name's words: ('control: silence', 'first 20')."""
        return ((f"control: {self.control}",) if self.control else ()) + tuple(f"{k}: {v}" for k, v in self.variants) \
            + ((f"first {self.first}",) if first and self.first else ())

    def label(self, first: bool = True) -> str:
        """The model with its tags: 'Oracle [control: silence]', 'Oracle [demo order: permuted]', 'Oracle'."""
        return self.model + "".join(f" [{t}]" for t in self.tags(first))

    @property
    def shown(self) -> frozenset[str]:
        """The identity fields its tags already name (a row name leaves them out of how rows differ)."""
        return frozenset({"control"} if self.control else ()) | {k for k, _ in self.variants}


def run_identity(config: dict[str, Any], variants: tuple[tuple[str, str], ...] = (), variant: int | None = None,
                 variant_label: str | None = None) -> RunIdentity:
    """A run's identity from its config.json (`variants`: what its benchmark says is off the plain run; `variant`
    and its label: the benchmark's variant inside the task)."""
    spec = config.get("spec") or {}
    task = str(spec.get("task", ""))
    return RunIdentity(benchmark=str(spec.get("benchmark") or config.get("benchmark") or ""),
                       model=str(spec.get("model", "")), task=task, seed=int(spec.get("seed", 0)), variant=variant,
                       cell=task + (f" {variant_label}" if variant_label else ""), control=spec.get("control") or None,
                       first=spec.get("max_samples") or None, variants=tuple(variants))


def _runs_of_seeds(seeds: list[int]) -> str:
    """'2 seeds', or '3 runs of 2 seeds' where runs of one seed differ in what the line does not name (a method)."""
    distinct = len(set(seeds))
    named = f"{distinct} seed{'s' * (distinct > 1)}"
    return named if distinct == len(seeds) else f"{len(seeds)} runs of {named}"


CONTROLS = "control", "whose audio was replaced, so their figures are not the model's"


def left_out_line(runs: list[RunIdentity], where: str, instead: str, what: tuple[str, str] = CONTROLS) -> str:
    """One line naming the runs a table leaves out ('' when none): which model, task and control, and seeds; `what`:
    what kind of runs they are and why they are left out."""
    cells: dict[str, list[int]] = {}
    for run in runs:
        cells.setdefault(f"{run.label()} on {run.cell or run.task}", []).append(run.seed)
    if not cells:
        return ""
    named = "; ".join(f"{cell} ({_runs_of_seeds(seeds)})" for cell, seeds in sorted(cells.items()))
    kind, why = what
    return f"Left out of {where}: {len(runs)} {kind} run{'s' * (len(runs) > 1)}, {why}: {named}. {instead}"
