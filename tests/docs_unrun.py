"""What the test can check of a documented command that cannot run on this machine (a GPU, Docker, a person, a
download, an installation): its program exists, every --flag it uses is one the program takes, every model it names
is registered, and a `pip install` asks for extras and pins the project declares."""
from __future__ import annotations

import re
import shlex
import subprocess

from docs_pages import Command, Shell, explain
from harness_cli import REPO

# programs that are not ours and not installed with the project: the page says where they come from
EXTERNAL = {"lmms-eval": "not a dependency: installing it pulls a CUDA torch",
            "sbatch": "SLURM's own client: scripts/slurm_cluster.sh installs it for scripts/test_slurm.sh"}
PINNED_IN = (REPO / "pyproject.toml", REPO / "scripts" / "setup_env.sh", REPO / "scripts" / "setup_vllm.sh")


def words(command: Command) -> list[str]:
    """The command's words, the command inside `eval "$(...)"` for an eval, without `VAR=value` prefixes."""
    tokens = shlex.split(command.line, comments=True)
    if tokens[0] == "eval":
        tokens = shlex.split(re.fullmatch(r"\$\((.*)\)", tokens[1].strip()).group(1))
    while tokens and re.fullmatch(r"\w+=.*", tokens[0]):
        tokens = tokens[1:]
    return tokens


def check_unrun(command: Command, shell: Shell) -> None:
    tokens = words(command)
    program = tokens[0]
    if program == "export":
        assert re.fullmatch(r"\w+=\S+", tokens[1]), f"{command.where}: `{command.line}` sets nothing"
        return
    if program == "pip":
        return _check_pip(command, tokens)
    if program in EXTERNAL:
        return
    usage = _usage(command, tokens, shell)
    for flag in (t.split("=", 1)[0] for t in tokens if t.startswith("--")):
        assert re.search(rf"{re.escape(flag)}\b", usage), f"{command.where}: {program} takes no {flag}"
    runs = program == "acousticbench" and tokens[1:2] == ["run"] or program == "python" and tokens[1].endswith("run.py")
    if runs and "--model" in tokens:
        listed = shell.run("acousticbench models").stdout
        for model in tokens[tokens.index("--model") + 1].split(","):
            assert re.search(rf"^{re.escape(model)}\s", listed, flags=re.M), f"{command.where}: no model {model}"


def _usage(command: Command, tokens: list[str], shell: Shell) -> str:
    """What the program says it takes: its --help (asked with the words before the first flag, so a subcommand's
    own), or for a shell script that has none, its text."""
    program, head = tokens[0], _until_flag(tokens)
    if program == "python":
        assert tokens[1] == "-m" or (shell.folder / tokens[1]).is_file(), f"{command.where}: no {tokens[1]}"
        return _help(command, shell, head)
    if program == "acousticbench":
        return _help(command, shell, head)
    path = shell.folder / program
    assert path.is_file() and path.stat().st_mode & 0o111, f"{command.where}: {program} is not an executable script"
    text = path.read_text(encoding="utf-8")
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0, f"{command.where}: {program} does not parse"
    delegate = re.search(r'^exec \S+ -m ([\w.]+) "\$@"$', text, flags=re.M)  # a script that hands its words on
    return _help(command, shell, head) if delegate else text


def _until_flag(tokens: list[str]) -> list[str]:
    return tokens[: next((i for i, t in enumerate(tokens) if t.startswith("-") and t != "-m"), len(tokens))]


def _help(command: Command, shell: Shell, head: list[str]) -> str:
    result = shell.run(shlex.join([*head, "--help"]))
    assert result.returncode == 0, explain(Command(shlex.join([*head, "--help"]), command.where), result)
    return result.stdout


def _check_pip(command: Command, tokens: list[str]) -> None:
    section = (REPO / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1].split("\n[")[0]
    extras = set(re.findall(r"^([\w-]+) = \[", section, flags=re.M))  # tomllib is 3.11's; the project runs on 3.10
    pinned = "\n".join(path.read_text() for path in PINNED_IN)
    for token in tokens[2:]:
        wanted = re.fullmatch(r"\.\[([\w,-]+)\]", token)
        if wanted:
            unknown = set(wanted.group(1).split(",")) - extras
            assert not unknown, f"{command.where}: pyproject.toml declares no extra {', '.join(sorted(unknown))}"
        elif "==" in token:
            assert token in pinned, f"{command.where}: {token} is pinned nowhere in {[p.name for p in PINNED_IN]}"
