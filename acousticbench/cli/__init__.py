"""Command line: flags -> RunSpecs and commands. Heavy modules are imported inside the command that needs them."""
from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from acousticbench.core.errors import UserError, run_command


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
    cmds.add_argument("--build-archive", action="store_true", help="build every benchmark's open pack into --archive")
    cmds.add_argument("--zip", type=Path, metavar="FILE", help="with --build-archive: also write a Zip64 zip of the pack")
    cmds.add_argument("--extract", type=Path, metavar="FILE", help="safely extract a pack zip into --archive")
    cmds.add_argument("--export-dataset", type=Path, metavar="DIR", help="write the packs of --archive (or --task's) as "
                      "a Hugging Face dataset folder: Parquet, an Audio column, one config per task (needs the [hf] extra)")
    cmds.add_argument("--import-dataset", type=Path, metavar="DIR", help="rebuild a pack into --archive from a folder "
                      "--export-dataset wrote, every byte checked against its manifest (needs the [hf] extra)")
    cmds.add_argument("--report", type=Path, nargs="*", metavar="RESULTS_DIR",
                      help="write one offline HTML report of the finished runs in these folders (default --results-dir)")
    cmds.add_argument("--out", type=Path, default=Path("report.html"), help="with --report: the file (default report.html)")
    cmds.add_argument("--embed-audio", action="store_true", help="with --report: put the clips inside the file")
    from acousticbench.benchmarks import faces

    for face in faces().values():  # each benchmark's own flags (AcousticBench: --split, --judge; AudioICL: --shots, ...)
        face.add_arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def command() -> int:
        from acousticbench.run.checks import load_env_file

        load_env_file()  # real environment variables win; a line that cannot be read is named
        return _dispatch(args)

    building = (args.build_archive or args.extract or args.export_dataset or args.import_dataset
                or _own_command(args) is not None)
    if building:  # a SIGTERM unwinds like Ctrl-C: the staging folder is removed and the workers ended
        import signal

        from acousticbench.core.errors import raise_terminated

        signal.signal(signal.SIGTERM, raise_terminated)
    interrupted = ("nothing half-built is left in place; run the same command again." if building else
                   "finished answers are saved; run the same command with --resume to continue.")
    return run_command(command, interrupted=interrupted)


def _dispatch(args: argparse.Namespace) -> int:
    from acousticbench.cli import commands

    other = _other_command(args)
    if other is not None:
        return other()
    if not args.model:
        raise UserError("nothing to do: pass --model NAME to run (see --list-models), or a command such as --verify-checksums.")
    check = check_run_settings(args)
    return commands.run(specs_from_args(args), dry_run=args.dry_run, reference=check, args=args)


def _other_command(args: argparse.Namespace) -> Callable[[], int] | None:
    """The command its flags ask for other than a run (each wins over --model), ready to call; None for a run."""
    from acousticbench.cli import commands

    if args.list_models:
        return lambda: commands.list_models(args.archive)
    if args.list_tasks:
        return commands.list_tasks
    if args.build_archive:
        return lambda: commands.build_archive(args.archive, args.zip)
    own = _own_command(args)
    if own is not None:  # a benchmark's own command flag (AudioICL: --build-audioicl)
        def own_command() -> int:
            own()
            return 0

        return own_command
    if args.extract:
        return lambda: commands.extract(args.extract, args.archive)
    if args.export_dataset or args.import_dataset:
        return lambda: _dataset_command(args)
    if args.verify_checksums:
        return lambda: commands.verify(args.archive, args.task)
    if args.report is not None:
        return lambda: commands.report(args.report or [args.results_dir], args.out, args.embed_audio, args.references)
    if args.promote_reference:
        return lambda: commands.promote_references(args.promote_reference, args.references)
    return None


def _dataset_command(args: argparse.Namespace) -> int:
    import importlib.util

    if importlib.util.find_spec("pyarrow") is None:
        raise UserError("--export-dataset and --import-dataset need pyarrow: pip install -e '.[hf]'.")
    from acousticbench.packs import dataset_io

    if args.export_dataset:
        return dataset_io.export_dataset(args.archive, args.export_dataset, args.task)
    return dataset_io.import_dataset(args.import_dataset, args.archive)


def check_run_settings(args: argparse.Namespace):
    """A run's settings checked before anything starts (also for acousticbench.run.sweep); returns its
    --compare-reference check, or None."""
    from acousticbench.cli import commands

    if args.reference_tolerance is not None and not 0 <= args.reference_tolerance <= 100:
        raise UserError(f"--reference-tolerance is a percentage from 0 to 100, got {args.reference_tolerance}.")
    _check_settings(args)
    if not args.dry_run:
        from acousticbench.run.catalog import warm_imports

        warm_imports([m.strip() for m in args.model.split(",")])  # while the specs and the pack are made ready
    return commands.ReferenceCheck(args.references, args.reference_tolerance) if args.compare_reference else None


def _own_command(args: argparse.Namespace):
    from acousticbench.benchmarks import faces

    return next((c for c in (face.command(args) for face in faces().values()) if c is not None), None)


def split_tasks(args: argparse.Namespace) -> dict[str, list[str]]:
    """--task -> each benchmark's tasks in it (canonical order); a benchmark's own flag without one of its tasks is
    refused."""
    from acousticbench.benchmarks import claim_tasks, faces

    claimed = claim_tasks(args.task)
    parser = build_parser()
    for bench, face in faces().items():
        used = [f"--{flag.replace('_', '-')}" for flag in face.OWN_FLAGS
                if getattr(args, flag) != parser.get_default(flag)]
        if used and not claimed[bench]:
            raise UserError(f"{', '.join(used)} appl{'y' if len(used) > 1 else 'ies'} to {bench} tasks: "
                            f"{face.FLAGS_HINT}.")
    return claimed


def _check_settings(args: argparse.Namespace) -> None:
    """Seeds, URLs and keys that no backend could use are one line now, before any server is asked."""
    from acousticbench.run import checks

    for seed in (args.seed or []) + (args.seeds or []):
        checks.check_seed(seed)
    for flag, value in (("--endpoint", args.endpoint), ("--judge-endpoint", args.judge_endpoint)):
        for url in (value or "").split(","):
            if url.strip():
                checks.check_url(url.strip(), flag)
    checks.check_environment()


def specs_from_args(args: argparse.Namespace) -> list:
    """Every run of the command: for each model, each benchmark's runs in registration order (AcousticBench: task x
    seed; AudioICL: task x k x seed). A sweep of one model or of several is the same list."""
    from acousticbench.benchmarks import faces
    from acousticbench.run.catalog import get_model
    from acousticbench.core.records import DEFAULT_SEED

    models = list(dict.fromkeys(m.strip() for m in args.model.split(",") if m.strip()))
    if not models:
        raise UserError(f"--model {args.model!r} names no model (see --list-models).")
    for model in models:
        get_model(model, args.archive)  # unknown model (or LoRA adapter missing): fail before anything else
    if not 0.0 <= args.max_error_rate <= 1.0:
        raise UserError(f"--max-error-rate must be between 0 and 1, got {args.max_error_rate}.")
    tasks = split_tasks(args)
    seeds = list(dict.fromkeys((args.seed or []) + (args.seeds or []))) or [DEFAULT_SEED]
    every = faces()
    specs = [spec for model in models for bench, face in every.items() if tasks[bench]
             for spec in face.specs(args, model, tasks[bench], seeds)]
    for spec in specs:  # what a run needs of its model's server (AcousticBench's --judge logprobs: token logprobs)
        entry = get_model(spec.model, args.archive)
        for capability, why in getattr(spec, "requirements", dict)().items():
            if capability not in entry.capabilities:
                raise UserError(why.format(model=spec.model))
    return specs
