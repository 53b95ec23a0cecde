"""The flags made from the declared settings (core/settings.py and each benchmark's options), their parsing into
those objects, and how a command runs as the command line runs it: shared by run.py and `acousticbench`."""
from __future__ import annotations

import argparse
import importlib
import typing
from typing import Any

from acousticbench.core.errors import run_command

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
            _plugin_failed(f"{PLUGINS} names {name!r}, which cannot be imported ({err}): fix the name or PYTHONPATH.")
        except (Exception, SystemExit) as err:  # the plugin's own code failed (or exited) as it was imported
            said = " ".join(str(err).split())[:200] or "no message"
            _plugin_failed(f"{PLUGINS} names {name!r}, whose import failed ({type(err).__name__}: {said}): fix the "
                           f"plugin, or leave it out of {PLUGINS}.")


def _plugin_failed(line: str) -> None:
    import sys

    print(f"error: {line}", file=sys.stderr)
    raise SystemExit(2) from None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line naming the fix, exit 2, instead of a usage dump
        from acousticbench.core.command_words import spelt

        self.exit(2, f"error: {spelt(message)} (see `{self.prog} --help`)\n")

    def format_help(self) -> str:  # its help names other commands as the command line it belongs to spells them
        from acousticbench.core.command_words import spelt

        return spelt(super().format_help())


def add_fields(group, model: type, only: tuple[str, ...] | None = None, skip: tuple[str, ...] = ()) -> None:
    """A flag per declared field of a settings model; values stay strings for the model to parse and check, and a
    flag not given is absent from the namespace (so an options object knows what was set)."""
    from acousticbench.core.settings import flag_of

    for name, field in model.model_fields.items():
        extra = field.json_schema_extra or {}
        if "per_run" not in extra or name in skip or (only is not None and name not in only):
            continue  # not a declared setting (a field made without core.settings.setting has no flag)
        flag = flag_of(model, name)
        on = field.annotation is bool and field.default is True  # on by default: --name and --no-name
        kind: dict[str, Any] = {"action": argparse.BooleanOptionalAction if on else "store_true"} \
            if field.annotation is bool else {}
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
        add_fields(p.add_argument_group(f"{name} ({face.flags_hint})"), face.options)


def settings_of(args: argparse.Namespace):
    """The namespace of a run's flags as (RunSettings, {benchmark: options}), checked by the settings themselves."""
    from acousticbench.api import settings_from
    from acousticbench.benchmarks import faces
    from acousticbench.core.settings import RunSettings

    given = vars(args)
    fields = {k: v for k, v in given.items() if k in RunSettings.model_fields}
    if "seed_flags" in given:  # --seed N (repeatable) and --seeds a,b add up
        fields["seeds"] = ",".join([*map(str, given["seed_flags"]), fields.get("seeds", "")])
    for face in faces().values():
        fields.update({k: v for k, v in given.items() if k in face.options.model_fields})
    return settings_from(None, (), fields)


def evaluate_command(args: argparse.Namespace) -> int:
    from acousticbench.api import evaluate
    from acousticbench.core.reporter import ConsoleReporter

    settings, options = settings_of(args)
    return evaluate(settings, options=list(options.values()), reporter=ConsoleReporter()).status


def guarded(command, building: bool) -> int:
    """Run a command as the command line does: .env read, one line per error, SIGTERM and SIGHUP unwinding like Ctrl-C."""
    def with_env() -> int:
        from acousticbench.core.checks import load_env_file

        load_env_file()  # real environment variables win; a line that cannot be read is named
        if lacking := room_lacking():  # under `ulimit -v`: room to work in, or one line
            raise UserError(lacking)
        return command()

    from acousticbench.core.errors import UserError, end_on_signals
    from acousticbench.core.memory_limit import room_lacking

    end_on_signals()  # a run keeps its records and marks itself interrupted; a build removes what it staged
    return run_command(with_env, interrupted=BUILD_INTERRUPTED if building else RUN_INTERRUPTED)
