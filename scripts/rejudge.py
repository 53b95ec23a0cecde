#!/usr/bin/env python3
"""Label the null answers of finished runs again without asking the model, each through its benchmark's relabeller:
AcousticBench answers through the LLM judge, AudioICL answers scored again (with --scoring, or the scoring they were
run with)."""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from acousticbench.core.errors import UserError, run_command
from acousticbench.tools.rescore import RunFile, change_line, save
from acousticbench.benchmarks.acoustic.judge.modes import DEFAULT_JUDGE_MODEL


async def _rejudge_all(files: list[Path], model: str, endpoint: str | None, scoring: str | None) -> None:
    from acousticbench.core import checks

    checks.check_environment()  # a key or URL the judge could not use: one line before any file is touched
    if endpoint:
        checks.check_url(endpoint, "--judge-endpoint")
    runs = [RunFile.load(path) for path in files]
    for line in (line for run in runs for line in run.torn):  # judging the rest would drop that question
        raise UserError(f"{line.describe()}: ask it again first with scripts/rerun_nones.py (or run.py --resume), "
                        "then rejudge; nothing was changed.")
    options = {"judge_model": model, "judge_endpoint": endpoint, "scoring": scoring}
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
            save(run, records, relabeller.what)  # judge calls are cached: an interrupted run repeats none it finished
            print(change_line(str(run.path), run, records))
    finally:
        for relabeller in relabellers.values():
            await relabeller.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", type=Path, nargs="+", help="responses.jsonl files or run folders")
    parser.add_argument("--judge-model", default=DEFAULT_JUDGE_MODEL)
    parser.add_argument("--judge-endpoint", help="OpenAI-compatible URL (default $ACOUSTICBENCH_JUDGE_ENDPOINT, else OpenAI)")
    parser.add_argument("--scoring", choices=["strict", "lenient"], help="AudioICL runs: score with these rules")
    args = parser.parse_args(argv)
    return run_command(lambda: asyncio.run(_rejudge_all(args.files, args.judge_model, args.judge_endpoint,
                                                        args.scoring)) or 0,
                       interrupted="files not yet rewritten are unchanged; judge calls made so far are cached.")


if __name__ == "__main__":
    sys.exit(main())
