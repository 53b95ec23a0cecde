"""The command line: `acousticbench COMMAND ...` and `python run.py --flags`. Flags are made from the declared settings
(core/settings.py: RunSettings, and each benchmark's options), parsed into those objects, and handed to the typed
operations of acousticbench.api (api/commands.py); nothing below this module reads flags."""
from __future__ import annotations

import argparse
import importlib
import typing
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError, run_command

REFERENCE_FIELDS = ("compare_reference", "reference_tolerance", "references")
PATH_FIELDS = ("archive", "results_dir")
RUN_INTERRUPTED = "finished answers are saved; run the same command with --resume to continue."
BUILD_INTERRUPTED = "nothing half-built is left in place; run the same command again."


PLUGINS = "ACOUSTICBENCH_PLUGINS"


def load_plugins() -> None:
    """Import the modules $ACOUSTICBENCH_PLUGINS names (a comma list): a plugin registers its benchmarks and models
    (register_benchmark, register_model) as it is imported, before the flags are made from them."""
    import os

    for name in filter(None, (part.strip() for part in os.environ.get(PLUGINS, "").split(","))):
        try:
            importlib.import_module(name)
        except ImportError as err:
            import sys

            print(f"error: {PLUGINS} names {name!r}, which cannot be imported ({err}): fix the name or PYTHONPATH.",
                  file=sys.stderr)
            raise SystemExit(2) from None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line naming the fix, exit 2, instead of a usage dump
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def add_fields(group, model: type, only: tuple[str, ...] | None = None, skip: tuple[str, ...] = ()) -> None:
    """A flag per declared field of a settings model; values stay strings for the model to parse and check, and a
    flag not given is absent from the namespace (so an options object knows what was set)."""
    from acousticbench.core.settings import flag_of

    for name, field in model.model_fields.items():
        extra = field.json_schema_extra or {}
        if "per_run" not in extra or name in skip or (only is not None and name not in only):
            continue  # not a declared setting (a field made without core.settings.setting has no flag)
        flag = flag_of(model, name)
        kind: dict[str, Any] = {"action": "store_true"} if field.annotation is bool else {}
        choices = [a for a in typing.get_args(field.annotation) if isinstance(a, str)]
        if typing.get_origin(field.annotation) is typing.Literal:
            kind["choices"] = choices
        elif field.annotation is not bool:
            kind["metavar"] = extra.get("metavar") or flag.lstrip("-").replace("-", "_").upper()
        group.add_argument(flag, dest=name, default=argparse.SUPPRESS,
                           help=field.description.replace("%", "%%"), **kind)


def add_run_flags(p: argparse.ArgumentParser) -> None:
    """Every run flag: the harness's settings, then each benchmark's options."""
    from acousticbench.benchmarks import faces
    from acousticbench.core.settings import RunSettings

    run = p.add_argument_group("run")
    add_fields(run, RunSettings, skip=REFERENCE_FIELDS + PATH_FIELDS)
    run.add_argument("--seed", type=int, action="append", dest="seed_flags", default=argparse.SUPPRESS,
                     help="run seed (default 42); repeat for several")
    add_fields(p.add_argument_group("reference trajectories"), RunSettings, only=REFERENCE_FIELDS)
    add_fields(p.add_argument_group("paths"), RunSettings, only=PATH_FIELDS)
    for name, face in faces().items():
        add_fields(p.add_argument_group(f"{name} ({face.FLAGS_HINT})"), face.Options)


def settings_of(args: argparse.Namespace):
    """The namespace of a run's flags as (RunSettings, {benchmark: options}), checked by the settings themselves."""
    from acousticbench.api import settings_from
    from acousticbench.core.settings import RunSettings

    given = vars(args)
    fields = {k: v for k, v in given.items() if k in RunSettings.model_fields}
    if "seed_flags" in given:  # --seed N (repeatable) and --seeds a,b add up
        fields["seeds"] = ",".join([*map(str, given["seed_flags"]), fields.get("seeds", "")])
    from acousticbench.benchmarks import faces

    for face in faces().values():
        fields.update({k: v for k, v in given.items() if k in face.Options.model_fields})
    return settings_from(None, (), fields)


def evaluate_command(args: argparse.Namespace) -> int:
    from acousticbench.api import evaluate

    settings, options = settings_of(args)
    return evaluate(settings, options=list(options.values())).status


COMMAND_FLAGS = ("list_models", "list_tasks", "verify_checksums", "build_archive", "extract", "export_dataset",
                 "import_dataset", "report", "promote_reference")


def build_parser() -> argparse.ArgumentParser:
    from acousticbench.benchmarks import faces

    p = _Parser(prog="run.py", description="Evaluate an audio-language model on AcousticBench (and AudioICL). The same "
                "as `acousticbench run`; the command flags below are `acousticbench`'s other commands.")
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
        for name, own in face.COMMANDS.items():
            if own.flag:
                cmds.add_argument(own.flag, dest="own_" + name.replace("-", "_"), default=None, help=own.help,
                                  **({"metavar": own.metavar} if own.metavar else {"action": "store_const",
                                                                                  "const": True}))
    return p


def main(argv: list[str] | None = None) -> int:
    """python run.py: a run, or one of the command flags."""
    import sys

    from acousticbench.core.console import safe_output

    safe_output()  # an ASCII-only console prints ± as +/-, never a traceback
    load_plugins()
    args = build_parser().parse_args(argv)
    try:
        command = _flag_command(args)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return _guarded(command or (lambda: evaluate_command(args)), building=command is not None)


def _guarded(command, building: bool) -> int:
    """Run a command as the command line does: .env read, one line per error, SIGTERM and SIGHUP unwinding like Ctrl-C."""
    def with_env() -> int:
        from acousticbench.core.checks import load_env_file

        load_env_file()  # real environment variables win; a line that cannot be read is named
        return command()

    from acousticbench.core.errors import end_on_signals

    end_on_signals()  # a run keeps its records and marks itself interrupted; a build removes what it staged
    return run_command(with_env, interrupted=BUILD_INTERRUPTED if building else RUN_INTERRUPTED)


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
    from acousticbench.api import commands

    own = [(face, name, value) for face in faces().values() for name, command in face.COMMANDS.items()
           if command.flag and (value := getattr(args, "own_" + name.replace("-", "_"))) is not None]
    given = [f"--{flag.replace('_', '-')}" for flag in COMMAND_FLAGS if getattr(args, flag) not in (None, False)]
    given += [face.COMMANDS[name].flag for face, name, _ in own]
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
        return lambda: commands.build_archive(archive, args.zip)
    if own:
        face, name, value = own[0]
        argv = ([str(value)] if face.COMMANDS[name].metavar else []) + ["--archive", str(archive), "--task", _task(args)]
        return lambda: face.COMMANDS[name].main(argv)
    if args.extract:
        return lambda: commands.extract(args.extract, archive)
    if args.export_dataset:
        return lambda: commands.export_dataset(archive, args.export_dataset, _task(args))
    if args.import_dataset:
        return lambda: commands.import_dataset(args.import_dataset, archive)
    if args.verify_checksums:
        return lambda: commands.verify(archive, _task(args))
    if args.report is not None:
        results = Path(getattr(args, "results_dir", "results"))
        return lambda: commands.report(args.report or [results], args.out or Path("report.html"), args.embed_audio,
                                       _references(args))
    if args.promote_reference:
        return lambda: commands.promote_references(args.promote_reference, _references(args))
    return None


def console(argv: list[str] | None = None) -> int:
    """acousticbench COMMAND ...: the console command (cli/console.py)."""
    from acousticbench.cli.console import console as run_console

    return run_console(argv)


__all__ = ["UserError", "build_parser", "console", "main"]
