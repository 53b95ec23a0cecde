"""Leaderboard: mean accuracy +- std over seeds per (model, task), as a Markdown table (or CSV)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acousticbench.core.errors import UserError
from acousticbench.tools.leaderboard import collect, markdown, model_index, reference_entries, to_csv, with_references
from acousticbench.tools.reference import default_root


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
    if args.paired:
        from acousticbench.tools import model_grid

        models, left = model_grid.model_rows(entries)
        if left and args.csv:
            print(f"note: {left}", file=sys.stderr)
        ordered = sorted(models, key=_row_order)
        tests = model_grid.grid_tests(model_grid.entry_answers(ordered), model_grid.nouns_of(ordered))
        sys.stdout.write(model_grid.to_csv(tests) if args.csv else
                         model_grid.markdown(tests, model_grid.served_otherwise(ordered)) + (f"\n{left}\n" if left else ""))
        return 0
    sys.stdout.write(to_csv(entries) if args.csv else markdown(entries))
    return 0


def _row_order(e) -> tuple:
    """The leaderboard's order: benchmark, the model's place in the registry, then its other fields."""
    from acousticbench.benchmarks import BENCHMARKS

    return list(BENCHMARKS).index(e.benchmark), model_index(e.model), e.model, str(e.identity), e.facets, \
        e.max_samples or 0, e.manifest, e.task, e.variant or 0, e.seed

