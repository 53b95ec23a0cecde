"""Compare two runs, or every seed of two models' cells, on the same questions or episodes: agreement, changed answers,
both accuracies, and the paired test by question (seeds averaged within a question, never counted as new pairs)."""
from __future__ import annotations

import argparse
from pathlib import Path

from acousticbench.api.tools import compare
from acousticbench.core.reporter import warn


def main(argv: list[str] | None = None) -> int:
    """A reader that goes away (a pipe into `head`) ends it with one line and 141, never a traceback."""
    from acousticbench.core.errors import run_command

    return run_command(lambda: _main(argv), interrupted="it only reads the runs: nothing was changed.")


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="acousticbench compare", description=__doc__,
                                     usage="%(prog)s RUN_A RUN_B | %(prog)s RUN_A... --vs RUN_B...")
    parser.add_argument("runs", type=Path, nargs="+", help="run folders or responses.jsonl files: two runs, or with "
                        "--vs every seed of side A's cell")
    parser.add_argument("--vs", type=Path, nargs="+", metavar="RUN_B", help="side B's runs: every seed of its cell")
    args = parser.parse_args(argv)
    if args.vs is None and len(args.runs) != 2:  # a pattern that matched more (or fewer) runs than meant: name them
        parser.error(f"give two runs, or side A's runs then --vs and side B's (one run per seed of each cell); got "
                     f"{len(args.runs)}: {', '.join(map(str, args.runs))}")
    paths_a, paths_b = (args.runs, args.vs) if args.vs else (args.runs[:1], args.runs[1:])
    comparison = compare(paths_a, paths_b)
    for line in comparison.torn:  # said, never skipped silently
        warn(f"note: {line.describe()}; compared without it (`acousticbench run ... --resume` on that run asks it "
             "again).")
    print("\n".join(comparison.lines()))
    return 0
