"""Leaderboard: mean accuracy +- std over seeds per (model, task), as a Markdown table (or CSV)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acousticbench.core.errors import UserError
from acousticbench.tools.leaderboard import collect, markdown, reference_entries, to_csv, with_references
from acousticbench.tools.reference import default_root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acousticbench leaderboard", description=__doc__)
    parser.add_argument("results_dirs", type=Path, nargs="*", help="results folders (default ./results unless --references)")
    parser.add_argument("--references", nargs="?", const=True, default=False, metavar="DIR",
                        help="include the reference trajectories (default folder: ./reference_trajectories)")
    parser.add_argument("--csv", action="store_true", help="CSV instead of Markdown")
    args = parser.parse_args(argv)
    dirs = args.results_dirs or ([] if args.references else [Path("results")])
    refs = default_root() if args.references is True else Path(args.references) if args.references else None
    if refs is not None and not refs.is_dir():  # a folder given is read, or refused: never an empty part
        print(f"error: --references {refs} is not a folder: pass the reference trajectories' folder.", file=sys.stderr)
        return 2
    missing = [d for d in dirs if not d.is_dir()]
    if missing:
        print(f"error: {missing[0]} is not a folder: pass results folders (default ./results).", file=sys.stderr)
        return 2
    entries = collect(dirs)
    if args.references:
        try:
            references = reference_entries(refs)
        except UserError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        entries = with_references(entries, references)  # a run that is also a reference counts once
    if not entries:
        print("error: no finished runs found.", file=sys.stderr)
        return 2
    sys.stdout.write(to_csv(entries) if args.csv else markdown(entries))
    return 0

