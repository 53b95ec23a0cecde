"""Label the null answers of finished runs again without asking the model, each through its benchmark's relabeller
(a judge reads them again, or a scorer scores them again); the flags under a benchmark's name are its own."""
from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from acousticbench.core.errors import UserError, run_command
from acousticbench.benchmarks import Option
from acousticbench.tools.rescore import (
    RunFile, add_benchmark_options, change_line, options_given, refuse_foreign_options, save,
)


async def _rejudge_all(args: argparse.Namespace, declared: list[Option]) -> None:
    from acousticbench.core import checks

    checks.check_environment()  # a key or URL the judge could not use: one line before any file is touched
    options = options_given(args, declared)
    runs = [RunFile.load(path) for path in args.files]
    refuse_foreign_options(args, runs, lambda bench: bench.relabel_options)
    for line in (line for run in runs for line in run.torn):  # judging the rest would drop that question
        raise UserError(f"{line.describe()}: ask it again first with `acousticbench rerun` (or `acousticbench run ... "
                        "--resume`), then rejudge; nothing was changed.")
    relabellers = {}  # one per benchmark of the files; made first, so a missing judge key is known before any backup
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
            print(change_line(str(run.path), run, records))
    finally:
        for relabeller in relabellers.values():
            await relabeller.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acousticbench rejudge", description=__doc__)
    parser.add_argument("files", type=Path, nargs="+", help="responses.jsonl files or run folders")
    declared = add_benchmark_options(parser, lambda bench: bench.relabel_options)
    args = parser.parse_args(argv)
    return run_command(lambda: asyncio.run(_rejudge_all(args, declared)) or 0,
                       interrupted="files not yet rewritten are unchanged; judge calls made so far are cached.")

