"""`acousticbench COMMAND ...`: the console command's subcommands, each parsed into the same settings objects and typed
operations as run.py's flags (cli/__init__.py)."""
from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from acousticbench.cli.flags import _Parser, add_run_flags, evaluate_command, guarded, load_plugins

# commands with a command line of their own: name -> (module with main(argv), what it does)
DELEGATED = {
    "leaderboard": ("acousticbench.cli.leaderboard", "mean accuracy ± std over seeds per model and task (Markdown/CSV)"),
    "compare": ("acousticbench.cli.compare", "two runs on the same questions: agreement, changed answers, McNemar"),
    "rerun": ("acousticbench.cli.rerun", "ask the model again for the items that failed"),
    "rejudge": ("acousticbench.cli.relabel", "label null answers again without asking the model"),
    "serve": ("acousticbench.serve.__main__", "serve an open-weight model (Docker, or --local from .venv-vllm)"),
}


def console_parser() -> argparse.ArgumentParser:
    from acousticbench.benchmarks import faces

    p = _Parser(prog="acousticbench", description="Evaluate audio-language models: AcousticBench and AudioICL.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    add_run_flags(sub.add_parser("run", help="run models on tasks and seeds (python run.py --model ... is the same)"))
    models = sub.add_parser("models", help="the model registry")
    models.add_argument("--archive", type=Path, default=Path("archive"))
    sub.add_parser("tasks", help="every benchmark's tasks")
    pack = sub.add_parser("pack", help="build, verify, extract, export or import the benchmark packs")
    packs = pack.add_subparsers(dest="pack_command", metavar="ACTION", required=True, parser_class=_Parser)
    for action, what in (("build", "build every benchmark's open pack"), ("verify", "check every question and file"),
                         ("extract", "safely extract a pack zip"), ("export", "write the packs as Hugging Face "
                         "datasets (Parquet)"), ("import", "rebuild a pack from an export, every byte checked")):
        one = packs.add_parser(action, help=what)
        one.add_argument("--archive", type=Path, default=Path("archive"), help="the pack folder (default ./archive)")
        if action in ("extract", "export", "import"):
            one.add_argument("path", type=Path, metavar="ZIP" if action == "extract" else "DIR")
        if action in ("verify", "export"):
            one.add_argument("--task", default="all", help="task code, comma list, or 'all'")
        if action == "build":
            one.add_argument("--zip", type=Path, metavar="FILE", help="also write a Zip64 zip of the pack")
            one.add_argument("--benchmark", metavar="NAME", help="only these benchmarks' packs (comma list; default "
                             f"every one: {', '.join(faces())})")
    report = sub.add_parser("report", help="one offline HTML report of finished runs")
    report.add_argument("results_dirs", type=Path, nargs="*", metavar="RESULTS_DIR", help="default ./results")
    report.add_argument("--out", type=Path, default=Path("report.html"))
    report.add_argument("--embed-audio", action="store_true", help="put the clips inside the file")
    report.add_argument("--references", type=Path, metavar="DIR", help="reference folder")
    ref = sub.add_parser("reference", help="promote finished runs into the reference trajectories")
    refs = ref.add_subparsers(dest="reference_command", metavar="ACTION", required=True, parser_class=_Parser)
    promote = refs.add_parser("promote", help="copy finished run folders into the references")
    promote.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN_DIR")
    promote.add_argument("--references", type=Path, metavar="DIR", help="default ./reference_trajectories")
    for name, (_, what) in DELEGATED.items():
        sub.add_parser(name, help=what, add_help=False)
    for face in faces().values():
        for name, own in face.commands.items():
            sub.add_parser(name, help=own.help, add_help=False)
    return p


def console(argv: list[str] | None = None) -> int:
    """acousticbench COMMAND ...: the console command."""
    import sys

    from acousticbench.benchmarks import faces
    from acousticbench.core.output_encoding import safe_output
    from acousticbench.core.memory_limit import fewer_blas_threads

    fewer_blas_threads()  # before a plugin or a benchmark imports numpy
    safe_output()
    load_plugins()
    argv = sys.argv[1:] if argv is None else list(argv)
    name, rest = (argv[0], argv[1:]) if argv else ("", [])
    if name in DELEGATED:
        return int(importlib.import_module(DELEGATED[name][0]).main(rest) or 0)
    for face in faces().values():
        if name in face.commands:
            return guarded(lambda: face.commands[name].main(rest), building=True)
    args = console_parser().parse_args(argv)
    if args.command is None:
        console_parser().print_help()
        return 2
    if args.command == "run":
        return guarded(lambda: evaluate_command(args), building=False)
    return guarded(lambda: _console_command(args), building=args.command == "pack")


def _console_command(args: argparse.Namespace) -> int:
    from acousticbench.cli import tool_commands as commands

    if args.command == "models":
        return commands.list_models(args.archive)
    if args.command == "tasks":
        return commands.list_tasks()
    if args.command == "report":
        return commands.report(args.results_dirs or [Path("results")], args.out, args.embed_audio, args.references)
    if args.command == "reference":
        return commands.promote_references(args.run_dirs, args.references)
    action = args.pack_command
    if action == "build":
        names = [n.strip() for n in (args.benchmark or "").split(",") if n.strip()]
        return commands.build_packs(args.archive, args.zip, names or None)
    if action == "verify":
        return commands.verify_packs(args.archive, args.task)
    if action == "extract":
        return commands.extract_pack(args.path, args.archive)
    if action == "export":
        return commands.export_packs(args.archive, args.path, args.task)
    return commands.import_packs(args.path, args.archive)
