"""`acousticbench rerun`: ask the model again for the items that failed; its flags parsed into api.rerun.rerun(), a
line printed for each run from what it returns."""
from __future__ import annotations

import argparse
from pathlib import Path

from acousticbench.api.rerun import __doc__ as WHAT
from acousticbench.api.rerun import rerun
from acousticbench.core.errors import run_command
from acousticbench.tools.rescore import add_benchmark_options


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acousticbench rerun", description=WHAT.split("\n`acousticbench")[0])
    parser.add_argument("files", type=Path, nargs="+", help="responses.jsonl files or run folders")
    parser.add_argument("--model", required=True, help="the model that produced the files")
    parser.add_argument("--concurrency", type=int)
    parser.add_argument("--max-retries", type=int, default=3, help="rounds of asking again (default 3)")
    parser.add_argument("--archive", type=Path, help="the pack the runs used (default: the one in their config.json)")
    parser.add_argument("--endpoint", help="server URL(s) for an open-weight model (default: its endpoint variable)")
    parser.add_argument("--include", default="", metavar="STATUSES",
                        help="also ask again the null answers of these statuses, comma-separated: refused, unparsed "
                        "(default: errors only)")
    declared = add_benchmark_options(parser, lambda bench: bench.rerun_options)
    args = parser.parse_args(argv)
    options = {o.dest: getattr(args, o.dest) for o in declared if hasattr(args, o.dest)}

    def command() -> int:
        for run in rerun(*args.files, model=args.model, rounds=args.max_retries, concurrency=args.concurrency,
                         archive=args.archive, endpoint=args.endpoint, include=args.include, **options):
            print(run.line)
        return 0

    return run_command(command, interrupted="every finished round is saved; run the same command again to continue.")
