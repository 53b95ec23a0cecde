"""Leaderboard: mean accuracy +- std over seeds per (model, task), as a Markdown table (or CSV)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acousticbench.api.tools import leaderboard
from acousticbench.core.reporter import warn


def main(argv: list[str] | None = None) -> int:
    """A reader that goes away (a pipe into `head`) ends it with one line and 141, never a traceback."""
    from acousticbench.core.errors import run_command

    return run_command(lambda: _main(argv), interrupted="it only reads the runs: nothing was changed.")


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="acousticbench leaderboard", description=__doc__)
    parser.add_argument("results_dirs", type=Path, nargs="*", help="results folders (default ./results unless --references)")
    parser.add_argument("--references", nargs="?", const=True, default=False, metavar="DIR",
                        help="include the reference trajectories (default folder: ./reference_trajectories)")
    parser.add_argument("--csv", action="store_true", help="CSV instead of Markdown")
    parser.add_argument("--paired", action="store_true", help="model against model instead: every two rows on every "
                        "task both ran, paired by question (seeds averaged within a question), with Benjamini-Hochberg "
                        "q-values over the grid")
    args = parser.parse_args(argv)
    board = leaderboard(*args.results_dirs, references=args.references)
    if args.paired:
        grid = board.paired()
        if grid.left_out and args.csv:
            warn(f"note: {grid.left_out}")
        sys.stdout.write(grid.csv() if args.csv else grid.markdown())
        return 0
    sys.stdout.write(board.csv() if args.csv else board.markdown())
    return 0
