"""AudioICL string-match scores: a CSV of model, shots, task, accuracy, n from run folders and public result files."""
from __future__ import annotations

import argparse
import itertools
from pathlib import Path

from acousticbench.core.errors import UserError, run_command, writable_folder


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
    return run_command(lambda: _write(args), interrupted="nothing was written.")


def _write(args: argparse.Namespace) -> int:
    from acousticbench.benchmarks.audioicl import summary

    if not args.inp.is_dir():
        raise UserError(f"--in {args.inp} is not a folder.")
    for out in (args.out, args.plot):
        if out is not None:
            writable_folder(out.parent, "the folder of", "--out/--plot")  # before reading every result
    answers = itertools.chain(summary.run_folder_answers(args.inp, args.prompt_style), summary.public_answers(args.inp))
    rows = summary.summarise(answers, args.scoring, args.only_model)  # aggregated as each run's file is read
    if not rows:
        raise UserError(f"no AudioICL results under {args.inp}{' for ' + args.only_model if args.only_model else ''}: "
                        "give a results folder or one with {model}_results_k{k}.jsonl files.")
    summary.write_csv(rows, args.out)
    if args.plot:
        summary.plot(rows, args.plot)
    print(f"Wrote {len(rows)} rows ({args.scoring} scoring) to {args.out}" + (f" and a plot to {args.plot}" if args.plot else ""))
    return 0
