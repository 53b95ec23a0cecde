"""Which of run.py's flags each command flag reads, so that a flag that would do nothing is refused in one line: two
commands at once, a flag that goes with a command given without it (--zip, --out, --embed-audio), and a run's flag
beside a command that does not read it."""
from __future__ import annotations

import argparse

from acousticbench.core.errors import UserError

# the run flags (settings and benchmark options, by field name) each command flag reads; the rest are refused
READS = {"list_models": {"archive"}, "list_tasks": set(), "verify_checksums": {"archive", "task"},
         "build_archive": {"archive"}, "extract": {"archive"}, "export_dataset": {"archive", "task"},
         "import_dataset": {"archive"}, "report": {"results_dir", "references"},
         "promote_reference": {"references"}}
OWN_READS = {"archive", "task"}  # a benchmark's own command flag (--build-audioicl, --export-lmms-tasks)
# a flag that only goes with one command: its field -> that command's field
GOES_WITH = {"zip": "build_archive", "out": "report", "embed_audio": "report"}


def spelt(field: str) -> str:
    """The flag of a field as a user types it."""
    from acousticbench.benchmarks import faces
    from acousticbench.core.settings import RunSettings, flag_of

    if field == "seed_flags":
        return "--seed"
    for model in (RunSettings, *(face.options for face in faces().values())):
        if field in model.model_fields:
            return flag_of(model, field)
    return "--" + field.replace("_", "-")


def run_fields_given(args: argparse.Namespace) -> list[str]:
    """The run flags on the command line, by field name (a flag not given is absent from the namespace)."""
    from acousticbench.benchmarks import faces
    from acousticbench.core.settings import RunSettings

    fields = set(RunSettings.model_fields).union(*(face.options.model_fields for face in faces().values()))
    return [name for name in vars(args) if name in fields or name == "seed_flags"]


def check(args: argparse.Namespace, commands: list[str]) -> None:
    """`commands`: every command flag given. Raises UserError for two commands, a flag that goes with a command
    given without it, or a run flag the command does not read."""
    if len(commands) > 1:
        raise UserError(f"{commands[0]} and {commands[1]} are two commands: run them one after the other.")
    field = commands[0][2:].replace("-", "_") if commands else None
    for companion, command in GOES_WITH.items():
        if getattr(args, companion, None) not in (None, False) and field != command:
            raise UserError(f"{spelt(companion)} takes effect only with --{command.replace('_', '-')}: add it, or "
                            f"drop {spelt(companion)}.")
    if field is None:
        return
    reads = READS.get(field, OWN_READS)
    unread = [name for name in run_fields_given(args) if name not in reads and name != "model"]
    if unread:
        raise UserError(f"{spelt(unread[0])} has no effect on {commands[0]}, which runs no model: drop it, or run "
                        "the two one after the other.")
