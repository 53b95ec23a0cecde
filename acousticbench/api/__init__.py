"""The Python API: typed operations over declared settings objects. The command line parses its flags into the same
objects and calls these functions, so a notebook and `acousticbench run` get the same runs, folders and files."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from acousticbench.core.errors import UserError
from acousticbench.core.reporter import ConsoleReporter, Reporter, SilentReporter, reporting
from acousticbench.api.runs import Evaluation, Run, load_runs, run_of
from acousticbench.core.settings import BenchmarkOptions, RunSettings, RunSpec, flag_of, validated

__all__ = ["Evaluation", "Run", "evaluate", "load_runs", "run_specs", "settings_from"]


def options_types() -> dict[str, type[BenchmarkOptions]]:
    """Each registered benchmark's options class, by benchmark name."""
    from acousticbench.benchmarks import faces

    return {name: face.options for name, face in faces().items()}


def settings_from(settings: RunSettings | None, options: Iterable[BenchmarkOptions],
                  fields: dict[str, Any]) -> tuple[RunSettings, dict[str, BenchmarkOptions]]:
    """The settings object and every benchmark's options, from objects and/or keyword fields (each keyword goes to
    the object that declares it; one that none declares is a TypeError naming them all)."""
    types = options_types()
    by_bench: dict[str, BenchmarkOptions] = {}
    for given in options:
        name = next((n for n, t in types.items() if isinstance(given, t)), None)
        if name is None:
            raise TypeError(f"{type(given).__name__} is no registered benchmark's options ({', '.join(types)})")
        by_bench[name] = given
    harness = {k: v for k, v in fields.items() if k in RunSettings.model_fields}
    own = {name: {k: v for k, v in fields.items() if k in t.model_fields} for name, t in types.items()}
    unknown = sorted(set(fields) - set(harness) - {k for part in own.values() for k in part})
    if unknown:
        known = sorted({*RunSettings.model_fields, *(k for t in types.values() for k in t.model_fields)})
        raise TypeError(f"evaluate() got unknown setting(s) {', '.join(unknown)}; it takes: {', '.join(known)}")
    if settings is None:
        settings = validated(RunSettings, harness)
    elif harness:
        settings = validated(RunSettings, {**{k: getattr(settings, k) for k in settings.model_fields_set}, **harness})
    for name, values in own.items():
        if values:
            given = by_bench.get(name)
            base = {k: getattr(given, k) for k in given.model_fields_set} if given is not None else {}
            by_bench[name] = validated(types[name], {**base, **values})
    return settings, by_bench


def run_specs(settings: RunSettings, options: dict[str, BenchmarkOptions]) -> list[RunSpec]:
    """Every run of the command: for each model, each benchmark's runs in registration order (task x variant x seed).
    Options given for a benchmark none of whose tasks is asked for are refused, as is a model no one knows."""
    from acousticbench.api.ineffective_settings import check_unused
    from acousticbench.benchmarks import claim_tasks, faces
    from acousticbench.core import audio_controls as controls, checks
    from acousticbench.run.catalog import get_model

    if not settings.models:
        raise UserError("nothing to do: pass --model NAME to run (see `acousticbench models`), or run a command "
                        "such as `acousticbench pack verify`.")
    for model in settings.models:
        get_model(model, settings.archive)  # unknown model (or LoRA adapter missing): fail before anything else
    check_unused(settings)  # a flag that would do nothing beside the others given is refused
    for seed in settings.seed_list:
        checks.check_seed(seed)
    claimed = claim_tasks(",".join(settings.task))
    every = faces()
    for bench, given in options.items():
        if given.model_fields_set and not claimed[bench]:
            used = [flag_of(type(given), name) for name in sorted(given.model_fields_set)]
            raise UserError(f"{', '.join(used)} appl{'y' if len(used) > 1 else 'ies'} to {bench} tasks: "
                            f"{every[bench].flags_hint}.")
    chosen = {bench: options.get(bench) or face.options() for bench, face in every.items() if claimed[bench]}
    for given in chosen.values():
        given.check(settings)  # AcousticBench: its judge endpoint; AudioICL: --plot's matplotlib
    per_run = settings.per_run  # each run holds its own settings; the sweep's stay with the sweep
    specs = [RunSpec(bench, model, task, seed, per_run, given, variant, control)
             for model in settings.models for bench, given in chosen.items()
             for task in claimed[bench] for variant in given.variants() for seed in settings.seed_list
             for control in (None, *settings.control)]  # each control beside its real run, on the same questions
    for spec in specs:  # what a run needs of its model (--judge logprobs: token logprobs; --control no-audio)
        entry = get_model(spec.model, settings.archive)
        for capability, why in {**spec.options.requirements(), **controls.NEEDS.get(spec.control, {})}.items():
            if capability not in entry.capabilities:
                raise UserError(why.format(model=spec.model))
    return specs


def evaluate(settings: RunSettings | None = None, *, options: Sequence[BenchmarkOptions] = (),
             reporter: Reporter | None = None, progress: bool | None = None, **fields: Any) -> Evaluation:
    """Run models on tasks and seeds, and return every run's records and metrics (see acousticbench.evaluate); print
    nothing but through `reporter`."""
    if reporter is None:
        reporter = ConsoleReporter(progress=True) if progress else SilentReporter()
    with reporting(reporter):
        return _evaluate(settings, options, fields)


def _evaluate(settings: RunSettings | None, options: Sequence[BenchmarkOptions], fields: dict[str, Any]) -> Evaluation:
    from acousticbench.api import commands
    from acousticbench.core import checks

    settings, by_bench = settings_from(settings, options, fields)
    checks.load_env_file()  # .env read, real environment variables win
    specs = run_specs(settings, by_bench)
    if not settings.dry_run:
        from acousticbench.run.catalog import warm_imports

        warm_imports(settings.models)  # their SDKs import while the settings are checked and the pack is loaded
    for part in (settings.endpoint or "").split(","):
        if part.strip():
            checks.check_url(part.strip(), "--endpoint")
    checks.check_environment()
    from acousticbench.models.prices import price_table

    price_table()  # ACOUSTICBENCH_PRICES read now: an impossible price is one line before anything is asked
    reference = (commands.ReferenceCheck(settings.references, settings.reference_tolerance)
                 if settings.compare_reference else None)
    results: list = []
    status = commands.run(specs, settings.sweep, reference=reference, results_out=results,
                          options={bench: spec.options for spec in specs for bench in [spec.benchmark]})
    return Evaluation([run_of(r) for r in results], status)
