"""Ask the model again for the items that failed (status error), up to K rounds each; with --include refused,unparsed
also those null answers (at a model's default temperature that resamples until a letter appears, so only when
asked). Every record asked again says so in its notes, config.json's history records the rerun, metrics.json is
recomputed, and the first original is kept as responses.jsonl.orig. Works on run folders of either benchmark.
`acousticbench rerun` (cli/rerun.py) parses its flags into rerun() and prints what it returns."""
from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from acousticbench.api.rescored import Rescored, benchmark_options, rescored
from acousticbench.core.errors import UserError
from acousticbench.core.reporter import warn
from acousticbench.run import context as run_context
from acousticbench.run.catalog import get_model
from acousticbench.tools.rescore import (
    RunFile, ask_again, options_given, questions_to_ask, refuse_foreign_options, save,
)


async def _rerun(run: RunFile, model: str, rounds: int, concurrency: int | None, archive: Path | None,
                 overrides: dict[str, Any], endpoint: str | None, include: frozenset[str]) -> Rescored:
    records = run.records
    asked = questions_to_ask(run, records, archive, include)  # errors, and a line a crash cut (asked with the rest)
    if asked.items:
        spec = run.spec(**overrides)
        # the run's own model id and decoding, and what its benchmark needs (logprobs): never another run's settings;
        # made, checked and opened as a run's backend is (run/context.py), so a rerun asks as the run did
        backend = run_context.model_backend(model, {**spec.backend_overrides(), "endpoint": endpoint},
                                            spec.settings.archive)
        run_context.check_prompts(backend, (prompt for _, prompt in asked.prepared.items))
        grader = run.bench.grader([spec])  # a benchmark's judge, made with its own options
        try:
            async with run_context.opened(backend, concurrency) as context:
                for _ in range(rounds):
                    if not asked.items:
                        break
                    records = await ask_again(run, records, asked, context, grader)
                    # after every round: an interrupted rerun keeps the rounds it finished; other settings named
                    told = _told(run, overrides)
                    save(run, records, ASKED_AGAIN + (f", {_told_text(told)}" if told else ""),
                         said={"settings": told} if told else None)
                    asked = questions_to_ask(run, records, archive, include)
        finally:
            if grader is not None:
                await grader.aclose()
    return rescored(run, records)


ASKED_AGAIN = "rerun_nones.py: asked again"


def _told(run: RunFile, overrides: dict[str, Any]) -> dict[str, Any]:
    """The benchmark options given that differ from the run's own (its judge, say): what the history names."""
    own = run.spec()
    return {key: value for key, value in overrides.items()
            if value is not None and getattr(own.options, key, getattr(own, key, None)) != value}


def _told_text(told: dict[str, Any]) -> str:
    return ", ".join(f"{key.replace('_', ' ')} {value}" for key, value in told.items())


def _archive(run: RunFile, override: Path | None) -> Path | None:
    archive = override or Path(run.config["spec"]["archive"])
    if not archive.is_dir():
        raise UserError(f"no benchmark pack at {archive} (the run's archive): pass --archive DIR.")
    return override


def _same_pack(run: RunFile, archive: Path | None) -> None:
    """The items asked again come from the pack the run was made on: a rebuilt one would mix two versions."""
    from acousticbench.run.runfolder import described, differences, is_pack

    spec = run.spec(archive=archive)
    changed = {k: v for k, v in differences(run.bench, run.config, run.bench.prepare(spec, {}).config, spec).items()
               if is_pack(k)}
    if changed:
        raise UserError(f"{run.path} was made on another pack than {spec.settings.archive} ({described(changed)}): "
                        "pass the pack it was made with as --archive; nothing was asked or changed.")


def _takes_endpoint(model: str, endpoint: str | None) -> None:
    """--endpoint for a model that talks to no server would be ignored: one line, before any file is touched."""
    import inspect

    backend = get_model(model).backend_class()
    if endpoint and "endpoint" not in inspect.signature(backend.__init__).parameters:
        raise UserError(f"--endpoint has no effect on {model}, which talks to no server: drop --endpoint; nothing "
                        "was asked or changed.")


def rerun(*runs: Path | str, model: str, rounds: int = 3, concurrency: int | None = None,
          archive: Path | str | None = None, endpoint: str | None = None, include: str | Iterable[str] = (),
          **options: Any) -> list[Rescored]:
    """Ask `model` again for the failed questions of each run (responses.jsonl or its folder), up to `rounds` rounds,
    through the run path's context; `include`: also the null answers of these statuses (refused, unparsed);
    `options`: a benchmark's own (AcousticBench's judge, ...). Every file is checked, and backed up, before any
    model call. Returns each run as it now is, with its statuses before and after."""
    if rounds < 1 or (concurrency is not None and concurrency < 1):
        raise UserError("--max-retries and --concurrency must be 1 or more.")
    from acousticbench.core import checks

    checks.check_environment()  # a key or URL no backend could use: one line before any file is touched
    from acousticbench.models.prices import price_table

    price_table()  # an impossible ACOUSTICBENCH_PRICES too: metrics.json is rewritten with the price
    for url in (endpoint or "").split(","):
        if url.strip():
            checks.check_url(url.strip(), "--endpoint")
    declared, given = benchmark_options(lambda bench: bench.rerun_options, options)
    overrides = options_given(given, declared)
    said = include if isinstance(include, str) else ",".join(include)  # a comma list or a list of statuses
    include = frozenset(s.strip() for s in said.split(",") if s.strip())
    if include - {"refused", "unparsed"}:
        raise UserError(f"--include takes refused and/or unparsed, got {said!r}.")
    _takes_endpoint(model, endpoint)
    archive = None if archive is None else Path(archive)
    files = [RunFile.load(Path(path)) for path in runs]
    refuse_foreign_options(given, files, lambda bench: bench.rerun_options)
    for run in files:  # every file is checked, and its backup written, before any model call
        if run.config["spec"]["model"] != model:
            raise UserError(f"{run.path} holds answers of {run.config['spec']['model']}, not {model}.")
        if own := run.bench.own_items(run.config):
            raise UserError(f"{run.path} is an {own} run, whose items are made as it goes, each from the answers "
                            "before it: a failed one ended its rounds, so it is continued, not asked again: "
                            "`acousticbench run ... --resume` with the run's flags asks the failed item again and "
                            "goes on; nothing was asked or changed.")
        _same_pack(run, _archive(run, archive))
        run.backup()
    for line in (line for run in files for line in run.torn):
        warn(f"note: {line.describe()}: it is asked again (the backup keeps the file as it was).")
    return [asyncio.run(_rerun(run, model, rounds, concurrency, _archive(run, archive), overrides, endpoint, include))
            for run in files]
