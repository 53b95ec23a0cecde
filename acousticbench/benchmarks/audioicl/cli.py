"""The AudioICL flags of run.py and how they turn into ICLRunSpecs; imports nothing heavy, so --help stays fast."""
from __future__ import annotations

import argparse
from pathlib import Path

from acousticbench.benchmarks.audioicl import SHOTS, parse_shots, split_task_spec
from acousticbench.errors import UserError

ICL_ONLY = ("shots", "prompt_style", "icl_meta", "icl_base", "icl_pad", "morse_alphabet", "scoring", "plot")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    icl = parser.add_argument_group("AudioICL (--task AudioCount, ..., or audioicl for all nine)")
    icl.add_argument("--shots", help="comma list of k, e.g. 1,3,5 (default 1,2,3,4,5)")
    icl.add_argument("--prompt-style", choices=["specific", "general", "none"],
                     help="instruction before the demos: per task (default), one for all tasks, or none")
    icl.add_argument("--icl-meta", type=Path, metavar="DIR", help="folder of meta_k{k}.jsonl (default <archive>/audioicl/meta)")
    icl.add_argument("--icl-base", type=Path, metavar="DIR",
                     help="folder the episodes' audio paths are relative to, the one holding data/ (default <archive>/audioicl)")
    icl.add_argument("--icl-pad", action="store_true",
                     help="pad every clip of an episode with silence to the longest (off: it erases AudioLength's cue)")
    icl.add_argument("--morse-alphabet", type=Path, metavar="DIR",
                     help="A.wav..Z.wav sent before the MorseCode demos (the open pack's: <archive>/audioicl/data/MorseCode/alphabet)")
    icl.add_argument("--scoring", choices=["strict", "lenient"],
                     help="strict: the public eval_str.py rules (default); lenient: number words count too")
    icl.add_argument("--plot", type=Path, metavar="FILE.png", help="after the runs, plot accuracy against shots per task")
    parser.add_argument_group("commands").add_argument(
        "--build-audioicl", action="store_true", help="build the open AudioICL pack into <archive>/audioicl")


def split_runs(args: argparse.Namespace) -> tuple[list[str], str]:
    """(the AudioICL tasks in --task, the --task left for AcousticBench); AudioICL-only flags without one are refused."""
    icl_tasks, rest = split_task_spec(args.task)
    _check_names(rest)
    if not icl_tasks:
        used = [f"--{name.replace('_', '-')}" for name in ICL_ONLY if getattr(args, name) not in (None, False)]
        if used:
            raise UserError(f"{', '.join(used)} appl{'y' if len(used) > 1 else 'ies'} to AudioICL tasks: add one to "
                            "--task (e.g. --task AudioCount, or audioicl for all nine).")
    elif args.split != "all" and not rest:
        raise UserError("--split applies to AcousticBench tasks; AudioICL episodes have no splits.")
    return icl_tasks, rest


def _check_names(spec: str) -> None:
    """An unknown task name is suggested from both benchmarks' names."""
    from acousticbench.benchmarks.audioicl import ALL, TASKS as ICL_TASKS
    from acousticbench.errors import unknown_name
    from acousticbench.benchmarks.acoustic.tasks import TASKS

    for name in (n.strip() for n in spec.split(",") if n.strip()):
        if name != "all" and name not in TASKS:
            raise unknown_name("task", name, [*TASKS, "all", *ICL_TASKS, ALL])


def icl_specs(args: argparse.Namespace, model: str, tasks: list[str], seeds: list[int]) -> list:
    """The AudioICL runs of one model: task x k x seed."""
    from acousticbench.benchmarks.audioicl.spec import ICLRunSpec

    if not tasks:
        return []
    shots = parse_shots(args.shots) if args.shots else list(SHOTS)
    return [
        ICLRunSpec(model=model, task=task, shots=k, seed=seed, max_samples=args.max_samples,
                   concurrency=args.concurrency, archive=args.archive, results_dir=args.results_dir,
                   meta_dir=args.icl_meta, base_dir=args.icl_base, prompt_style=args.prompt_style or "specific",
                   scoring=args.scoring or "strict", pad=args.icl_pad, morse_alphabet=args.morse_alphabet,
                   resume=args.resume, max_error_rate=args.max_error_rate, endpoint=args.endpoint,
                   api_model=args.api_model)
        for task in tasks for k in shots for seed in seeds
    ]
