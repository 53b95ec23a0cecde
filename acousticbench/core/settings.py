"""The harness's settings, declared once: SweepSettings (what a command sweeps, read by the sweep alone),
PerRunSettings (what each of its runs is run with), RunSettings (both, flat: what the flags and evaluate() take), the
base of a benchmark's own options, and RunSpec, one run of a sweep. The command line's flags, the Python API and config.json are all made
from these fields: a new harness setting is one field here."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from acousticbench.core.environment import safe_name
from acousticbench.core.errors import UserError
from acousticbench.core.records import DEFAULT_SEED, GenerationConfig


def setting(default: Any, help: str, *, flag: str | None = None, metavar: str | None = None,
            per_run: bool = True, **field: Any) -> Any:
    """A declared setting: its default, its help line, and how the command line spells it (flag None: --<name>).
    per_run: part of each run's spec (config.json's `spec`), not only of the command that starts the runs."""
    extra = {"flag": flag, "metavar": metavar, "per_run": per_run}
    return Field(default, description=help, json_schema_extra=extra, **field)


def flag_of(model: type[BaseModel], name: str) -> str:
    """How a field of a settings model is spelt on the command line."""
    extra = model.model_fields[name].json_schema_extra or {}
    return extra.get("flag") or "--" + name.replace("_", "-")


def per_run_fields(model: type[BaseModel]) -> list[str]:
    return [name for name, f in model.model_fields.items() if (f.json_schema_extra or {}).get("per_run", True)]


def comma_list(value: Any) -> Any:
    """'a,b' or ['a', 'b'] or 'a' -> a tuple; other values are left to the field's type."""
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, (int, Path)):
        return (value,)
    return tuple(value) if isinstance(value, (list, tuple)) else value


def validated(model: type[BaseModel], values: dict[str, Any]) -> Any:
    """The settings object, or one UserError line naming the flag to fix (the API's and the command line's alike)."""
    try:
        return model(**values)
    except ValidationError as err:
        first = err.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else ""
        message = str(first["msg"]).removeprefix("Value error, ")
        flag = flag_of(model, name) if name in model.model_fields else name
        raise UserError(message if message.startswith("--") else f"{flag}: {message}") from None


def whole_number(value: Any, flag: str) -> int:
    """A count given as a number or its text; one line naming the flag otherwise."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.lstrip("-").isdigit():
        raise ValueError(f"{flag}: {value!r} is not a whole number")
    number = int(text)
    if number < 1:
        raise ValueError(f"{flag}: must be 1 or more, got {number}")
    return number


def whole_numbers(value: Any, flag: str, example: str) -> tuple[int, ...]:
    """A comma list of whole numbers as ints ('42,43', [42, 43], 42): True or 42.5 is no whole number, never
    quietly seed 1 or seed 42; one line naming the flag otherwise."""
    parts = comma_list(value)
    if not isinstance(parts, tuple):
        raise ValueError(f"{flag}: {value!r} is not a comma list of whole numbers, e.g. {example}")
    numbers = []
    for part in parts:
        text = part.strip() if isinstance(part, str) else None
        if isinstance(part, bool) or not (isinstance(part, int) or (text and text.lstrip("-").isdigit())):
            raise ValueError(f"{flag}: {value!r} is not a comma list of whole numbers ({part!r} is not one), "
                             f"e.g. {example}")
        numbers.append(int(part))
    return tuple(numbers)


def no_bool(value: Any, flag: str) -> Any:
    """A number setting given True or False (which pydantic would take as 1 or 0): one line naming the flag."""
    if isinstance(value, bool):
        raise ValueError(f"{flag}: {value!r} is not a number")
    return value


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


@dataclass(frozen=True)
class OwnCommand:
    """A command a benchmark adds: `acousticbench NAME ARGS...` runs main(ARGS), which prints what its typed
    `functions` return (what a script calls; each prints nothing), and returns its exit status; `flag`, where given,
    is run.py's spelling of it, whose value (metavar: one; None: a switch) is passed first, followed by --archive
    and --task."""

    help: str
    main: Callable[[list[str]], int]
    flag: str | None = None
    metavar: str | None = None
    functions: tuple[Callable[..., Any], ...] = ()
