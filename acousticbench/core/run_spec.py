"""One run of a sweep as a value: RunSpec (a model on a task and seed, under the per-run settings and its benchmark's
options), and BenchmarkOptions, the base of a benchmark's own options. core/settings.py, which declares the settings
it holds (PerRunSettings, RunSettings), imports this module and re-exports both, so this one names them only in
annotations."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from acousticbench.core.environment import safe_name


class BenchmarkOptions(BaseModel):
    """A benchmark's own settings (AcousticBench: split, judge; AudioICL: shots, prompt style, scoring), each field a
    flag of its own. The defaults here suit a benchmark with none: every run identified by its fields alone, one run
    per task and seed, nothing asked of the backend."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # a setting that makes several runs of one task and seed (AudioICL: shots), as (spec field, folder and label
    # letter); None: none
    VARIANT: ClassVar[tuple[str, str] | None] = None

    def variants(self) -> list[int | None]:
        """The values of the variant a command runs (AudioICL: the k of --shots); [None] when there is no variant."""
        return [None]

    def kind(self) -> str:
        """A word or two naming a way of running that must never share a folder or a row with the plain runs
        (AcousticBench's 'adaptive psi'); '' for the plain way."""
        return ""

    def resume_key(self, spec: RunSpec) -> dict[str, Any]:
        """What must match for --resume to continue a run, beyond the harness's settings."""
        return self.model_dump(mode="json")

    def backend_overrides(self) -> dict[str, Any]:
        """What the backend must do for these runs (AcousticBench's --judge logprobs: return token logprobs)."""
        return {}

    def requirements(self) -> dict[str, str]:
        """Capabilities the model's entry must list, each with the line shown when it lacks it ({model} filled in)."""
        return {}

    def check(self, settings: RunSettings) -> None:
        """Refuse, with one UserError line, what cannot work before anything runs (a missing extra, say)."""
        return None


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: a model on one task (and variant) with one seed, under the command's settings and its
    benchmark's options. Frozen; the run folder, config.json and --resume are made from it."""

    benchmark: str
    model: str
    task: str
    seed: int
    settings: PerRunSettings  # the sweep's settings (SweepSettings) are the sweep's alone
    options: BenchmarkOptions
    variant: int | None = None
    control: str | None = None  # what this run hears instead of the real clips (core/audio_controls.py); None: real

    def __post_init__(self):  # one name however it was typed: Unicode's composed form (NFC), as folders and tables use
        import unicodedata

        object.__setattr__(self, "model", unicodedata.normalize("NFC", self.model))

    def _variant(self, pattern: str) -> str:
        named = self.options.VARIANT
        return "" if named is None or self.variant is None else pattern.format(letter=named[1], value=self.variant)

    @property
    def cell(self) -> str:
        """The run's place under a model in reference_trajectories/ and in sweep tables: 'rad', 'AudioCount/k3',
        'pit/adaptive-psi'."""
        kind = "/" + self.options.kind().replace(" ", "-") if self.options.kind() else ""
        return self.task + self._variant("/{letter}{value}") + kind

    def label(self) -> str:
        """'Oracle on rad (seed 42)'; a control run names its control beside the model: 'Oracle [control: silence]';
        an adaptive run its method: 'Oracle on pit adaptive psi (seed 42)'."""
        control = f" [control: {self.control}]" if self.control else ""
        kind = f" {self.options.kind()}" if self.options.kind() else ""
        return f"{self.model}{control} on {self.task}{self._variant(' {letter}={value}')}{kind} (seed {self.seed})"

    def run_prefix(self, backend_name: str) -> str:
        """Folder name without the timestamp: '<Model>-<task>[-k<k>]-<backend>-seed<N>'."""
        control = f"-control-{self.control}" if self.control else ""
        kind = "-" + self.options.kind().replace(" ", "-") if self.options.kind() else ""
        return (f"{safe_name(self.model)}-{self.task}{self._variant('-{letter}{value}')}{kind}{control}-{backend_name}"
                f"-seed{self.seed}")

    def reference_fields(self) -> dict[str, Any]:
        """What a reference summary.json records about the run beyond model and task: its variant."""
        named = self.options.VARIANT
        return {} if named is None else {named[0]: self.variant}

    def kind_field(self) -> dict[str, str]:
        """Its kind where it is not the plain way ({'kind': 'adaptive psi'}), as a reference summary and the sweep file
        name it; {} for the plain way."""
        kind = self.options.kind()
        return {"kind": kind} if kind else {}

    def backend_overrides(self) -> dict[str, Any]:
        """Settings the backend constructor takes; None means 'use the registry's'."""
        s = self.settings
        registry = None if s.endpoints_from is None else str(s.endpoints_from)
        return {"endpoint": s.endpoint, "endpoints_from": registry, "api_model": s.api_model,
                "temperature": s.generation.temperature, "max_tokens": s.generation.max_tokens,
                **self.options.backend_overrides()}

    def resume_key(self) -> dict[str, Any]:
        """What must match for --resume to continue a run (the folder name already fixes model, task, seed)."""
        s = self.settings
        return {"max_samples": s.max_samples, "temperature": s.generation.temperature,
                "max_tokens": s.generation.max_tokens, "api_model": s.api_model, **self.options.resume_key(self),
                **({"control": self.control} if self.control else {})}

    def to_json(self) -> dict[str, Any]:
        """config.json's `spec`: every per-run setting and option by name, flat (spec_from_config reads it back)."""
        settings = self.settings.model_dump(mode="json")  # generation is excluded: written whole below
        settings["generation"] = {"temperature": self.settings.generation.temperature,
                                  "max_tokens": self.settings.generation.max_tokens}
        return {"benchmark": self.benchmark, "model": self.model, "task": self.task, "seed": self.seed,
                **self.reference_fields(), **settings, **self.options.model_dump(mode="json"),
                **({"control": self.control} if self.control else {})}
