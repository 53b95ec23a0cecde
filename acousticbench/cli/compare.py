"""Compare two runs, or every seed of two models' cells, on the same questions or episodes: agreement, changed answers,
both accuracies, and the paired test by question (seeds averaged within a question, never counted as new pairs)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acousticbench.core.errors import UserError
from acousticbench.tools.paired import check_side, check_sides, compare_sides, load_run


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
    try:
        torn: list = []
        a, b = [load_run(p, torn) for p in paths_a], [load_run(p, torn) for p in paths_b]
        if a[0].bench.name != b[0].bench.name:
            raise UserError(f"{paths_a[0]} is a {a[0].bench.name} run and {paths_b[0]} a {b[0].bench.name} run: "
                            "compare runs of the same benchmark and task.")
        check_side(a, "A")
        check_side(b, "B")
        check_sides(a, b)
        result = compare_sides(a, b)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for line in torn:  # said, never skipped silently
        print(f"note: {line.describe()}; compared without it (`acousticbench run ... --resume` on that run asks it "
              "again).", file=sys.stderr)
    print("\n".join(result.lines(_name(a), _name(b), one_run_each=len(a) == len(b) == 1)))
    print("\n".join(serving_lines(paths_a, paths_b)))
    for line in control_lines(a, b):
        print(line)
    return 0


def serving_lines(paths_a: list[Path], paths_b: list[Path]) -> list[str]:
    """How the two sides were served differently (each side's first run folder's manifest), or that they were not."""
    from acousticbench.core.manifest import differences, manifest_of
    from acousticbench.run.results import CONFIG, read_config

    folders = [p if p.is_dir() else p.parent for p in (paths_a[0], paths_b[0])]
    if not all((f / CONFIG).is_file() for f in folders):
        return []
    changed = differences(*(manifest_of(read_config(f)) for f in folders))
    if not changed:
        return ["Serving manifests: the same (server, engine, model revision, chat template, generation, judge)."]
    return [f"Serving manifests differ in {len(changed)} fact(s), beside any change in answers:",
            *(f"  {line}" for line in changed)]


def control_lines(a, b) -> list[str]:
    """A side that is a control run (its audio replaced) is named as such: the difference then measures whether the
    model listens, never a difference between two models (a swap's 'accuracy' is against what was sent)."""
    out = []
    for name, side in (("A", a), ("B", b)):
        kind = side[0].facts.get("control")
        if kind:
            model = side[0].facts.get("model", "the model")
            out.append(f"Side {name} is a control run of {model} [control: {kind}]: its audio was replaced, so its "
                       "figures are not the model's; against its real run the difference says whether the model "
                       "listens" + (" (swap: answers are scored against the key of the clips as sent, so a "
                                    "listening model keeps its accuracy and an unlistening one loses it)."
                                    if kind == "swap" else "."))
    return out


def _name(runs) -> str:
    if len(runs) == 1:
        control = runs[0].facts.get("control")
        return str(runs[0].path) + (f" [control: {control}]" if control else "")
    seeds = ", ".join(str(r.seed) for r in runs)
    return f"{len(runs)} runs (seeds {seeds}): " + ", ".join(str(r.path) for r in runs)
