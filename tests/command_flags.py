"""Every command of the harness and the flags it takes, as its own parser says (`python tests/command_flags.py` prints
them as JSON; tests/test_message_flags.py runs it in a process of its own, since a command's --help exits and may
read .env): `run.py`, each `acousticbench ...` command down to its actions (`acousticbench pack verify`), each
bench/ script."""
from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import re
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
SERVERS = ("acousticbench.serve.hf_server", "acousticbench.serve.local")

OPTION = re.compile(r"^  (-[^ ].*?)(?:\s{2,}|$)")  # an option's line of a --help: "  -x, --flag VALUE   its help"
FLAG = re.compile(r"--[a-z][a-z0-9-]*")
NESTED = re.compile(r"^usage: .*?\{([\w,-]+)\} \.\.\.", flags=re.S)  # "{extract,agree} ...": its actions


def parser_flags(parser: argparse.ArgumentParser) -> set[str]:
    return {o for action in parser._actions for o in action.option_strings if o.startswith("--")}


def help_flags(argv: list[str]) -> tuple[set[str], list[str]]:
    """The flags `acousticbench ARGV --help` lists, and the actions its usage offers (`judge`: extract, agree)."""
    from acousticbench.cli.subcommands import console

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        console([*argv, "--help"])
    text = out.getvalue()
    flags = {flag for line in text.splitlines() if (m := OPTION.match(line)) for flag in FLAG.findall(m.group(1))}
    nested = NESTED.match(text)
    return flags, nested.group(1).split(",") if nested else []


def script_flags(path: Path) -> set[str]:
    """The flags a script's add_argument calls declare, read without running it (a bench script imports much)."""
    calls = [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"]
    return {arg.value for call in calls for arg in call.args if isinstance(arg, ast.Constant)
            and isinstance(arg.value, str) and arg.value.startswith("--")} | {"--help"}


def every_command() -> dict[str, list[str]]:
    """'run.py' and 'acousticbench COMMAND [ACTION]' -> the flags each takes."""
    from acousticbench.cli import build_parser
    from acousticbench.cli.subcommands import console_parser

    found = {"run.py": parser_flags(build_parser())}
    sub = next(a for a in console_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sub.choices.items():
        inner = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if inner:
            found.update({f"acousticbench {name} {action}": parser_flags(p) for action, p in inner[0].choices.items()})
        elif parser.add_help:
            found[f"acousticbench {name}"] = parser_flags(parser)
        else:  # a command with a command line of its own: what its --help lists, and its actions'
            flags, actions = help_flags([name])
            found[f"acousticbench {name}"] = flags
            found.update({f"acousticbench {name} {a}": help_flags([name, a])[0] for a in actions})
    found.update({f"bench/{path.name}": script_flags(path) for path in sorted(BENCH.glob("*.py"))})
    for module in SERVERS:  # the servers the harness starts as processes of their own, each with its flags
        found[f"python -m {module}"] = script_flags(BENCH.parent / (module.replace(".", "/") + ".py"))
    return {command: sorted(flags) for command, flags in found.items()}


if __name__ == "__main__":
    print(json.dumps(every_command()))
