"""The harness's settings, declared once: SweepSettings (what a command sweeps, read by the sweep alone),
PerRunSettings (what each of its runs is run with), RunSettings (both, flat: what the flags and evaluate() take), and
make_spec, a run's spec from config.json's flat fields. The command line's flags, the Python API and config.json are
all made from these fields: a new harness setting is one field here. How a field is declared and checked is
core/setting_fields.py; a run's spec and a benchmark's options base are core/run_spec.py (both re-exported here)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from acousticbench.core.records import DEFAULT_SEED, GenerationConfig
from acousticbench.core.run_spec import BenchmarkOptions, RunSpec
from acousticbench.core.setting_fields import (comma_list, flag_of, no_bool, per_run_fields, setting, validated,
                                               whole_number, whole_numbers)

__all__ = ["BenchmarkOptions", "PerRunSettings", "RunSettings", "RunSpec", "SweepSettings", "comma_list", "flag_of",
           "make_spec", "no_bool", "per_run_fields", "setting", "validated", "whole_number", "whole_numbers"]


class SweepSettings(BaseModel):
    """What a command sweeps and what it does around the runs: its models, tasks, seeds and audio controls, a dry run,
    serving its models (--serve), the canary and the reference check. Read by the sweep once, never part of a run's
    spec."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    model: tuple[str, ...] = setting((), "model display name, or a comma list for a sweep (see `acousticbench models`)",
                                     per_run=False)
    task: tuple[str, ...] = setting(("all",), "task code, comma list, or 'all' (default; see `acousticbench tasks`)",
                                    per_run=False)
    seeds: tuple[int, ...] = setting((), "comma list of seeds, e.g. 42,43,44 (default 42; --seed N adds one)",
                                     per_run=False)
    dry_run: bool = setting(False, "render the prompts, call nothing", per_run=False)
    serve: Literal["slurm"] | None = setting(
        None, "serve each open-weight model of the command itself: slurm submits its servers as sbatch jobs "
        "(ACOUSTICBENCH_SLURM_REPLICAS each, ACOUSTICBENCH_SBATCH_OPTIONS), evaluates against them as they come up "
        "and cancels them when the command ends", per_run=False)
    compare_reference: bool = setting(False, "after each run, compare it question by question with the reference run "
                                      "of the same seed", per_run=False)
    reference_tolerance: float | None = setting(None, "exit 1 when the match rate is below P percent (default 100 for "
                                                "local and open-weight models)", metavar="P", per_run=False)
    references: Path | None = setting(None, "reference folder (default ./reference_trajectories)", metavar="DIR",
                                      per_run=False)
    control: tuple[str, ...] = setting(
        (), "audio controls beside each run, comma list: silence, noise (same level and length), swap (the two clips, "
        "or a stereo clip's channels), no-audio; each a run of its own on the same questions, seeds and prompts",
        metavar="silence,noise,swap,no-audio", per_run=False)
    canary: bool = setting(True, "before a served or API model's runs, eight short tone probes (a few seconds) whose "
                           "answers show that its audio, both clips and both channels reach it; on by default, "
                           "--no-canary turns it off (config.json's canary)", per_run=False)

    @field_validator("model", "task", mode="before")
    @classmethod
    def _names(cls, value: Any, info: ValidationInfo) -> Any:
        names = comma_list(value)
        if not names and value:  # '--task ,': something given that names nothing
            what = ("task (see `acousticbench tasks`)" if info.field_name == "task"
                    else "model (see `acousticbench models`)")
            raise ValueError(f"--{info.field_name} {value!r} names no {what}.")
        return names


    @field_validator("control", mode="before")
    @classmethod
    def _controls(cls, value: Any) -> Any:
        from acousticbench.core.audio_controls import CONTROLS

        kinds = comma_list(value)
        for kind in kinds if isinstance(kinds, tuple) else ():
            if kind not in CONTROLS:
                raise ValueError(f"--control: {kind!r} is not a control; give any of {', '.join(CONTROLS)}")
        return tuple(dict.fromkeys(kinds)) if isinstance(kinds, tuple) else kinds


    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value: Any) -> Any:
        return whole_numbers(value, "--seeds", "42,43,44")


    @field_validator("reference_tolerance", mode="before")
    @classmethod
    def _not_bool(cls, value: Any, info: ValidationInfo) -> Any:
        return no_bool(value, flag_of(cls, info.field_name))


    @field_validator("reference_tolerance")
    @classmethod
    def _tolerance(cls, value: float | None) -> float | None:
        if value is not None and not 0 <= value <= 100:
            raise ValueError(f"--reference-tolerance is a percentage from 0 to 100, got {value}.")
        return value


    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.model))


    @property
    def seed_list(self) -> list[int]:
        return list(dict.fromkeys(self.seeds)) or [DEFAULT_SEED]


class PerRunSettings(BaseModel):
    """What each run of a command is run with: its first N questions, requests in flight, error budget, resume, server
    (an endpoint, or a folder of replicas), model id, pack, results folder and decoding. Each RunSpec holds it
    (config.json's `spec`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    max_samples: int | None = setting(None, "only the first N questions in id order")
    concurrency: int | Literal["auto"] | None = setting(
        None, "requests in flight: auto (the default for remote backends) finds each endpoint's capacity and backs "
        "off on 429/503; N is a fixed cap", metavar="auto|N")
    max_error_rate: float = setting(
        0.10, "the share of questions that may fail (default 0.10): a run stops early only once at least 10 have "
        "finished and the lower end of the 99.9% Wilson interval of its error rate is above it; a run that finishes "
        "above it exits 1")
    resume: bool = setting(False, "continue the latest matching run")
    endpoint: str | None = setting(None, "server URL(s) for an open-weight model, comma-separated; overrides "
                                   "ACOUSTICBENCH_<NAME>_ENDPOINT")
    endpoints_from: Path | None = setting(
        None, "a folder of served replicas, one file each (docker_serve.sh NAME --slurm writes them): each model's "
        "replicas are used as they come up and left as they end; overrides ACOUSTICBENCH_ENDPOINTS_FROM",
        metavar="DIR")
    api_model: str | None = setting(None, "the provider's model id, overriding the registry's")
    archive: Path = setting(Path("archive"), "benchmark pack folder (default ./archive)")
    results_dir: Path = setting(Path("results"), "where run folders go (default ./results)")
    generation: GenerationConfig = Field(default_factory=GenerationConfig, exclude=True,
                                         description="decoding settings sent to backends that accept them")

    @field_validator("max_error_rate", mode="before")
    @classmethod
    def _not_bool(cls, value: Any, info: ValidationInfo) -> Any:
        return no_bool(value, flag_of(cls, info.field_name))


    @field_validator("max_samples", mode="before")
    @classmethod
    def _max_samples(cls, value: Any) -> Any:
        return None if value is None else whole_number(value, "--max-samples")


    @field_validator("concurrency", mode="before")
    @classmethod
    def _concurrency(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
            return None if value is None else "auto"
        try:
            return whole_number(value, "--concurrency")
        except ValueError as err:
            raise ValueError(f"{err}: give auto or a number of requests in flight, e.g. 16") from None


    @field_validator("max_error_rate")
    @classmethod
    def _error_rate(cls, value: float) -> float:
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"--max-error-rate must be between 0 and 1, got {value}.")
        return value



class RunSettings(PerRunSettings, SweepSettings):
    """Everything `acousticbench run` takes, flat, as its flags give it and evaluate() takes it: the sweep's settings
    and those of each of its runs (`.sweep`, `.per_run`). A benchmark's own settings are its options object
    (BenchmarkOptions), not fields here."""

    @property
    def sweep(self) -> SweepSettings:
        return SweepSettings(**self._part(SweepSettings))

    @property
    def per_run(self) -> PerRunSettings:
        return PerRunSettings(**self._part(PerRunSettings))

    def _part(self, part: type[BaseModel]) -> dict[str, Any]:
        """The fields of `part` that were given (so a part still knows what was set, e.g. --canary)."""
        return {name: getattr(self, name) for name in part.model_fields if name in self.model_fields_set}


def make_spec(benchmark: str, options_type: type[BenchmarkOptions], *, model: str, task: str,
              seed: int = DEFAULT_SEED, **fields: Any) -> RunSpec:
    """A RunSpec from flat fields, each going to the harness's settings or the benchmark's options by its name (as
    config.json's `spec` holds them); a field neither declares is a TypeError naming it."""
    named = options_type.VARIANT
    variant = fields.pop(named[0], None) if named else None
    generation = fields.pop("generation", None)
    control = fields.pop("control", None)
    if isinstance(generation, dict):
        generation = GenerationConfig(**generation)
    own = {k: v for k, v in fields.items() if k in options_type.model_fields}
    harness = {k: v for k, v in fields.items() if k in PerRunSettings.model_fields}
    unknown = sorted(set(fields) - set(own) - set(harness))
    if unknown:
        raise TypeError(f"{benchmark} runs have no setting {', '.join(unknown)}")
    settings = validated(PerRunSettings, {**harness, **({"generation": generation} if generation is not None else {})})
    return RunSpec(benchmark, model, task, seed, settings, validated(options_type, own), variant, control)
