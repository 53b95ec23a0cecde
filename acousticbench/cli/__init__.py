"""The command line: `acousticbench COMMAND ...` and `python run.py --flags`. Flags are made from the declared settings
(core/settings.py: RunSettings, and each benchmark's options), parsed into those objects, and handed to the typed
operations of acousticbench.api (api/, printed by cli/tool_commands.py); nothing below this module reads flags."""
from __future__ import annotations

import argparse
from pathlib import Path

from acousticbench.cli.flags import _Parser, add_run_flags, evaluate_command, guarded, load_plugins
from acousticbench.core.errors import UserError

# each command flag of run.py and the console command it is: messages name the console's words, run.py spells them
CONSOLE_WORDS = {"list_models": "acousticbench models", "list_tasks": "acousticbench tasks",
                 "verify_checksums": "acousticbench pack verify", "build_archive": "acousticbench pack build",
                 "extract": "acousticbench pack extract", "export_dataset": "acousticbench pack export",
                 "import_dataset": "acousticbench pack import", "report": "acousticbench report",
                 "promote_reference": "acousticbench reference promote"}
COMMAND_FLAGS = tuple(CONSOLE_WORDS)


def build_parser() -> argparse.ArgumentParser:
    from acousticbench.benchmarks import faces

    p = _Parser(prog="run.py", description="Evaluate an audio-language model on AcousticBench (and AudioICL). The "
                "console command `acousticbench` does the same (its run command); the command flags below are its "
                "other commands.")
    add_run_flags(p)
    p.add_argument("--promote-reference", type=Path, nargs="+", metavar="RUN_DIR",
                   help="copy finished run folders into the references and rewrite summary.json")
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
    cmds.add_argument("--out", type=Path, help="with --report: the file (default report.html)")
    cmds.add_argument("--embed-audio", action="store_true", help="with --report: put the clips inside the file")
    for face in faces().values():
        for name, own in face.commands.items():
            if own.flag:
                cmds.add_argument(own.flag, dest="own_" + name.replace("-", "_"), default=None, help=own.help,
                                  **({"metavar": own.metavar} if own.metavar else {"action": "store_const",
                                                                                  "const": True}))
    return p


def run_py_words() -> dict[str, str]:
    """How run.py spells each console command a message may name: `acousticbench models` is `python run.py
    --list-models`, a benchmark's own `acousticbench build-audioicl` its flag, `acousticbench run` run.py itself."""
    from acousticbench.benchmarks import faces

    words = {console: f"python run.py --{flag.replace('_', '-')}" for flag, console in CONSOLE_WORDS.items()}
    words.update({f"acousticbench {name}": f"python run.py {own.flag}" for face in faces().values()
                  for name, own in face.commands.items() if own.flag})
    return {**words, "acousticbench run": "python run.py"}


def main(argv: list[str] | None = None) -> int:
    """python run.py: a run, or one of the command flags."""
    import sys

    from acousticbench.core.command_words import spell_commands_as, spelt
    from acousticbench.core.output_encoding import safe_output
    from acousticbench.core.memory_limit import fewer_blas_threads

    fewer_blas_threads()  # before a plugin or a benchmark imports numpy
    safe_output()  # an ASCII-only console prints ± as +/-, never a traceback
    load_plugins()
    before = spell_commands_as(run_py_words())  # every line below names other commands in run.py's words
    try:
        args = build_parser().parse_args(argv)
        try:
            command = _flag_command(args)
        except UserError as err:
            print(f"error: {spelt(str(err))}", file=sys.stderr)
            return 2
        return guarded(command or (lambda: evaluate_command(args)), building=command is not None)
    finally:
        spell_commands_as(before)


def _archive(args: argparse.Namespace) -> Path:
    return Path(getattr(args, "archive", "archive"))


def _task(args: argparse.Namespace) -> str:
    return getattr(args, "task", "all")


def _references(args: argparse.Namespace) -> Path | None:
    return Path(args.references) if getattr(args, "references", None) else None


def _flag_command(args: argparse.Namespace):
    """The command its flags ask for other than a run, ready to call; None for a run. A command flag beside --model
    is refused: the two cannot both happen."""
    from acousticbench.benchmarks import faces
    from acousticbench.cli import tool_commands as commands

    own = [(face, name, value) for face in faces().values() for name, command in face.commands.items()
           if command.flag and (value := getattr(args, "own_" + name.replace("-", "_"))) is not None]
    given = [f"--{flag.replace('_', '-')}" for flag in COMMAND_FLAGS if getattr(args, flag) not in (None, False)]
    given += [face.commands[name].flag for face, name, _ in own]
    if given and getattr(args, "model", None):
        raise UserError(f"{given[0]} is a command of its own and runs no model: drop --model, or run the two one "
                        "after the other.")
    from acousticbench.cli import combinations  # any other flag beside a command, or a command's flag without it

    combinations.check(args, given)
    archive = _archive(args)
    if args.list_models:
        return lambda: commands.list_models(archive)
    if args.list_tasks:
        return commands.list_tasks
    if args.build_archive:
        return lambda: commands.build_packs(archive, args.zip)
    if own:
        face, name, value = own[0]
        argv = ([str(value)] if face.commands[name].metavar else []) + ["--archive", str(archive), "--task", _task(args)]
        return lambda: face.commands[name].main(argv)
    if args.extract:
        return lambda: commands.extract_pack(args.extract, archive)
    if args.export_dataset:
        return lambda: commands.export_packs(archive, args.export_dataset, _task(args))
    if args.import_dataset:
        return lambda: commands.import_packs(args.import_dataset, archive)
    if args.verify_checksums:
        return lambda: commands.verify_packs(archive, _task(args))
    if args.report is not None:
        results = Path(getattr(args, "results_dir", "results"))
        return lambda: commands.report(args.report or [results], args.out or Path("report.html"), args.embed_audio,
                                       _references(args))
    if args.promote_reference:
        return lambda: commands.promote_references(args.promote_reference, _references(args))
    return None


__all__ = ["UserError", "build_parser", "main"]
