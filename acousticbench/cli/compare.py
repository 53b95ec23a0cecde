"""Compare two runs on the same questions or episodes: agreement, changed answers, both accuracies, McNemar's exact test."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acousticbench.core.errors import UserError
from acousticbench.tools.paired import compare_runs, load_run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="acousticbench compare", description=__doc__)
    parser.add_argument("run_a", type=Path, help="run folder or responses.jsonl")
    parser.add_argument("run_b", type=Path, help="run folder or responses.jsonl")
    args = parser.parse_args(argv)
    try:
        torn: list = []
        (a, bench_a), (b, bench_b) = load_run(args.run_a, torn), load_run(args.run_b, torn)
        if bench_a.name != bench_b.name:
            raise UserError(f"{args.run_a} is a {bench_a.name} run and {args.run_b} a {bench_b.name} run: compare runs "
                            "of the same benchmark and task.")
        result = compare_runs(a, b, bench_a)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for line in torn:  # said, never skipped silently
        print(f"note: {line.describe()}; compared without it (run.py --resume on that run asks it again).",
              file=sys.stderr)
    print("\n".join(result.lines(str(args.run_a), str(args.run_b))))
    return 0

