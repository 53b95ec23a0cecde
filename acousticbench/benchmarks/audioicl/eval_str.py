"""AudioICL string-match scores: a CSV of model, shots, task, accuracy, n from run folders and public result files."""
from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass
from pathlib import Path

from acousticbench.core.errors import UserError, run_command, writable_folder


@dataclass(frozen=True)
class StringMatchScores:
    """What eval-str wrote: the CSV's rows (model, shots, task, accuracy, n), under which scoring, and where."""

    rows: list[dict]
    scoring: str
    out: Path
    plot: Path | None

    def line(self) -> str:
        return (f"Wrote {len(self.rows)} rows ({self.scoring} scoring) to {self.out}"
                + (f" and a plot to {self.plot}" if self.plot else ""))


def string_match_scores(inp: Path | str, out: Path | str, *, only_model: str | None = None,
                        prompt_style: str | None = None, scoring: str = "strict",
                        plot: Path | str | None = None) -> StringMatchScores:
    """The CSV of AudioICL run folders and public {model}_results_k{k}.jsonl files under `inp`, written to `out` (and
    the plot of accuracy against shots to `plot`); prints nothing."""
    from acousticbench.benchmarks.audioicl import summary

    inp, out, plot = Path(inp), Path(out), None if plot is None else Path(plot)
    if scoring not in ("strict", "lenient"):
        raise UserError(f"--scoring {scoring}: give strict or lenient.")
    if not inp.is_dir():
        raise UserError(f"--in {inp} is not a folder.")
    for path in (out, plot):
        if path is not None:
            writable_folder(path.parent, "the folder of", "--out/--plot")  # before reading every result
    answers = itertools.chain(summary.run_folder_answers(inp, prompt_style), summary.public_answers(inp))
    rows = summary.summarise(answers, scoring, only_model)  # aggregated as each run's file is read
    if not rows:
        raise UserError(f"no AudioICL results under {inp}{' for ' + only_model if only_model else ''}: "
                        "give a results folder or one with {model}_results_k{k}.jsonl files.")
    summary.write_csv(rows, out)
    if plot:
        summary.plot(rows, plot)
    return StringMatchScores(rows, scoring, out, plot)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="acousticbench eval-str", description=__doc__)
    p.add_argument("--in", dest="inp", type=Path, required=True,
                   help="folder searched recursively: AudioICL run folders and {model}_results_k{k}.jsonl files")
    p.add_argument("--out", type=Path, required=True, help="CSV to write")
    p.add_argument("--only-model", help="only this model")
    p.add_argument("--prompt-style", choices=["specific", "general", "none"],
                   help="only run folders with this prompt style (public files carry none and are always read)")
    p.add_argument("--scoring", choices=["strict", "lenient"], default="strict",
                   help="strict: the public rules (default); lenient: number words count too")
    p.add_argument("--plot", type=Path, metavar="FILE.png", help="also plot accuracy against shots per task")
    args = p.parse_args(argv)

    def write() -> int:
        print(string_match_scores(args.inp, args.out, only_model=args.only_model, prompt_style=args.prompt_style,
                                  scoring=args.scoring, plot=args.plot).line())
        return 0

    return run_command(write, interrupted="nothing was written.")
