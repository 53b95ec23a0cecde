"""`acousticbench rejudge`: label null answers again without asking the model; its flags parsed into
api.relabel.rejudge(), a line printed for each run from what it returns."""
from __future__ import annotations

import argparse
from pathlib import Path

from acousticbench.api.relabel import __doc__ as WHAT
from acousticbench.api.relabel import rejudge
from acousticbench.core.errors import run_command
from acousticbench.tools.rescore import add_benchmark_options


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acousticbench rejudge", description=WHAT.split("\n`acousticbench")[0])
    parser.add_argument("files", type=Path, nargs="+", help="responses.jsonl files or run folders")
    declared = add_benchmark_options(parser, lambda bench: bench.relabel_options)
    args = parser.parse_args(argv)
    options = {o.dest: getattr(args, o.dest) for o in declared if hasattr(args, o.dest)}

    def command() -> int:
        for run in rejudge(*args.files, **options):
            print(run.line)
        return 0

    return run_command(command, interrupted="files not yet rewritten are unchanged; judge calls made so far are cached.")
