"""Command line: flags -> RunSpecs and commands. Heavy modules are imported inside the command that needs them."""
from __future__ import annotations

import argparse
from pathlib import Path

from acousticbench.errors import UserError, run_command


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line naming the fix, exit 2, instead of a usage dump
        self.exit(2, f"error: {message} (see `python run.py --help`)\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _concurrency(text: str) -> int | str:
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError as err:
        raise argparse.ArgumentTypeError(f"{err}: give auto or a number of requests in flight, e.g. 16") from None


def _seed_list(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma list of whole numbers, e.g. 42,43,44") from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="run.py", description="Evaluate an audio-language model on AcousticBench.")
    run = p.add_argument_group("run")
    run.add_argument("--model", help="model display name, or a comma list for a sweep (see --list-models)")
    run.add_argument("--task", default="all", help="task code, comma list, or 'all' (default; see --list-tasks)")
    run.add_argument("--split", choices=["all", "train", "eval"], default="all")
    run.add_argument("--seed", type=int, action="append", help="run seed (default 42); repeat for several")
    run.add_argument("--seeds", type=_seed_list, help="comma list of seeds, e.g. 42,43,44")
    run.add_argument("--max-samples", type=_positive_int, help="only the first N questions in id order")
    run.add_argument("--concurrency", type=_concurrency, metavar="auto|N",
                     help="requests in flight: auto (the default for remote backends) finds each endpoint's capacity "
                     "and backs off on 429/503; N is a fixed cap")
    run.add_argument("--max-error-rate", type=float, default=0.10,
                     help="the share of questions that may fail (default 0.10): a run stops early only once at least "
                     "10 have finished and the lower end of the 99.9%% Wilson interval of its error rate is above it; "
                     "a run that finishes above it exits 1")
    run.add_argument("--resume", action="store_true", help="continue the latest matching run")
    run.add_argument("--dry-run", action="store_true", help="render the prompts, call nothing")
    run.add_argument("--endpoint", help="server URL(s) for an open-weight model, comma-separated; overrides "
                     "ACOUSTICBENCH_<NAME>_ENDPOINT")
    run.add_argument("--api-model", help="the provider's model id, overriding the registry's")
    run.add_argument("--judge", choices=["auto", "llm", "rules"], default="auto",
                     help="auto: strict rules first, the LLM judge for the rest (rules alone when no judge key is "
                     "set); llm: the LLM judge for every answer (the paper's setting); rules: no LLM")
    run.add_argument("--judge-model", default="gpt-4o-mini", help="the LLM judge's model (default gpt-4o-mini)")
    run.add_argument("--judge-endpoint", help="OpenAI-compatible URL for the judge (default "
                     "$ACOUSTICBENCH_JUDGE_ENDPOINT, else the OpenAI API)")
    ref = p.add_argument_group("reference trajectories")
    ref.add_argument("--compare-reference", action="store_true",
                     help="after each run, compare it question by question with the reference run of the same seed")
    ref.add_argument("--reference-tolerance", type=float, metavar="P",
                     help="exit 1 when the match rate is below P percent (default 100 for local and open-weight models)")
    ref.add_argument("--references", type=Path, metavar="DIR", help="reference folder (default ./reference_trajectories)")
    ref.add_argument("--promote-reference", type=Path, nargs="+", metavar="RUN_DIR",
                     help="copy finished run folders into the references and rewrite summary.json")
    paths = p.add_argument_group("paths")
    paths.add_argument("--archive", type=Path, default=Path("archive"), help="benchmark pack folder (default ./archive)")
    paths.add_argument("--results-dir", type=Path, default=Path("results"), help="where run folders go (default ./results)")
    cmds = p.add_argument_group("commands")
    cmds.add_argument("--list-models", action="store_true", help="print the model registry (with the LoRA finetunes "
                      "under <--archive>/lora/)")
    cmds.add_argument("--list-tasks", action="store_true", help="print the tasks")
    cmds.add_argument("--verify-checksums", action="store_true", help="check every question and audio file of --task")
    cmds.add_argument("--build-archive", action="store_true", help="build the open AcousticBench pack into --archive")
    cmds.add_argument("--zip", type=Path, metavar="FILE", help="with --build-archive: also write a Zip64 zip of the pack")
    cmds.add_argument("--extract", type=Path, metavar="FILE", help="safely extract a pack zip into --archive")
    cmds.add_argument("--report", type=Path, nargs="*", metavar="RESULTS_DIR",
                      help="write one offline HTML report of the finished runs in these folders (default --results-dir)")
    cmds.add_argument("--out", type=Path, default=Path("report.html"), help="with --report: the file (default report.html)")
    cmds.add_argument("--embed-audio", action="store_true", help="with --report: put the clips inside the file")
    from acousticbench.benchmarks.audioicl.cli import add_arguments

    add_arguments(p)  # AudioICL: --shots, --prompt-style, --icl-meta, ..., --build-audioicl
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def command() -> int:
        from dotenv import load_dotenv

        load_dotenv(override=False)  # real environment variables win
        return _dispatch(args)

    building = args.build_archive or args.build_audioicl or args.extract
    interrupted = ("nothing half-built is left in place; run the same command again." if building else
                   "finished answers are saved; run the same command with --resume to continue.")
    return run_command(command, interrupted=interrupted)


def _dispatch(args: argparse.Namespace) -> int:
    from acousticbench import commands

    if args.list_models:
        return commands.list_models(args.archive)
    if args.list_tasks:
        return commands.list_tasks()
    if args.build_archive:
        return commands.build_archive(args.archive, args.zip)
    if args.build_audioicl:
        from acousticbench.benchmarks.audioicl import commands as audioicl

        return audioicl.build(args.archive)
    if args.extract:
        return commands.extract(args.extract, args.archive)
    if args.verify_checksums:
        return commands.verify(args.archive, args.task)
    if args.report is not None:
        return commands.report(args.report or [args.results_dir], args.out, args.embed_audio, args.references)
    if args.promote_reference:
        return commands.promote_references(args.promote_reference, args.references)
    if not args.model:
        raise UserError("nothing to do: pass --model NAME to run (see --list-models), or a command such as --verify-checksums.")
    if args.reference_tolerance is not None and not 0 <= args.reference_tolerance <= 100:
        raise UserError(f"--reference-tolerance is a percentage from 0 to 100, got {args.reference_tolerance}.")
    if not args.dry_run:
        from acousticbench.catalog import warm_imports

        warm_imports([m.strip() for m in args.model.split(",")])  # while the specs and the pack are made ready
    check = commands.ReferenceCheck(args.references, args.reference_tolerance) if args.compare_reference else None
    if args.plot and not args.dry_run:
        import importlib.util

        if importlib.util.find_spec("matplotlib") is None:  # known now, not after every run has been paid for
            raise UserError("--plot needs matplotlib: pip install -e '.[plot]', or drop --plot.")
    return commands.run(specs_from_args(args), dry_run=args.dry_run, reference=check, plot=args.plot)


def specs_from_args(args: argparse.Namespace) -> list:
    """Every run of the command: for each model, its AcousticBench runs (task x seed), then its AudioICL runs
    (task x k x seed). A sweep of one model or of several is the same list."""
    from acousticbench.benchmarks.audioicl.cli import icl_specs, split_runs
    from acousticbench.catalog import get_model
    from acousticbench.benchmarks.acoustic.spec import DEFAULT_SEED, RunSpec
    from acousticbench.benchmarks.acoustic.tasks import resolve_tasks

    models = list(dict.fromkeys(m.strip() for m in args.model.split(",") if m.strip()))
    if not models:
        raise UserError(f"--model {args.model!r} names no model (see --list-models).")
    for model in models:
        get_model(model, args.archive)  # unknown model (or LoRA adapter missing): fail before anything else
    if not 0.0 <= args.max_error_rate <= 1.0:
        raise UserError(f"--max-error-rate must be between 0 and 1, got {args.max_error_rate}.")
    icl_tasks, rest = split_runs(args)  # AudioICL task names leave --task and become their own runs
    if not icl_tasks and not rest.strip(","):
        raise UserError(f"--task {args.task!r} names no task (see --list-tasks).")
    seeds = list(dict.fromkeys((args.seed or []) + (args.seeds or []))) or [DEFAULT_SEED]
    tasks = resolve_tasks(rest) if rest else []
    specs: list = []
    for model in models:
        specs += [RunSpec(model=model, task=task, seed=seed, split=args.split, max_samples=args.max_samples,
                          concurrency=args.concurrency, archive=args.archive, results_dir=args.results_dir,
                          judge=args.judge, judge_model=args.judge_model, judge_endpoint=args.judge_endpoint,
                          resume=args.resume, max_error_rate=args.max_error_rate,
                          endpoint=args.endpoint, api_model=args.api_model)
                  for task in tasks for seed in seeds]
        specs += icl_specs(args, model, icl_tasks, seeds)
    return specs
