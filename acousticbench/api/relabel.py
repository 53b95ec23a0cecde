"""Label the null answers of finished runs again without asking the model, each through its benchmark's relabeller
(a judge reads them again, or a scorer scores them again); the flags under a benchmark's name are its own.
`acousticbench rejudge` (cli/relabel.py) parses its flags into rejudge() and prints what it returns."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acousticbench.api.rescored import Rescored, benchmark_options, rescored
from acousticbench.core.errors import UserError
from acousticbench.tools.rescore import RunFile, options_given, refuse_foreign_options, save


def rejudge(*runs: Path | str, **options: Any) -> list[Rescored]:
    """Label the null answers of each run (responses.jsonl or its folder) again through its benchmark's relabeller,
    without asking the model; `options`: a benchmark's own (AcousticBench's judge, judge_model, ...). Every file is
    checked, and backed up, before any judge call. Returns each run as it now is, with its statuses before and
    after."""
    return asyncio.run(_rejudge_all([Path(path) for path in runs], options))


async def _rejudge_all(paths: list[Path], given: dict[str, Any]) -> list[Rescored]:
    from acousticbench.core import checks

    checks.check_environment()  # a key or URL the judge could not use: one line before any file is touched
    declared, named = benchmark_options(lambda bench: bench.relabel_options, given)
    options = options_given(named, declared)
    runs = [RunFile.load(path) for path in paths]
    refuse_foreign_options(named, runs, lambda bench: bench.relabel_options)
    for line in (line for run in runs for line in run.torn):  # judging the rest would drop that question
        raise UserError(f"{line.describe()}: ask it again first with `acousticbench rerun` (or `acousticbench run ... "
                        "--resume`), then rejudge; nothing was changed.")
    relabellers = {}  # one per benchmark of the files; made first, so a missing judge key is known before any backup
    done = []
    try:
        for run in runs:
            if run.bench.name not in relabellers:
                relabellers[run.bench.name] = run.bench.relabeller(options)
        for run in runs:  # every backup written before any judge call
            run.backup()
        for run in runs:
            relabeller = relabellers[run.bench.name]
            records = await relabeller.relabel(run.records)
            # judge calls are cached: an interrupted run repeats none it finished
            save(run, records, relabeller.what, relabeller.settings, relabeller.said)
            done.append(rescored(run, records))
    finally:
        for relabeller in relabellers.values():
            await relabeller.aclose()
    return done
