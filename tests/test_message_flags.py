"""No message of the package names a flag that the command printing it rejects. Every string the package can print
(its string literals, docstrings aside) that names a --flag is checked against the parser of the command it names
before the flag (`acousticbench pack verify --archive`, `run.py --judge rules`), or else of the commands that print it:
a line of the run path is printed under both `acousticbench run` and `python run.py`, so its flags must be ones both
take. Lines name other commands in the console's words, which run.py spells its own way (core/command_words.py);
the end-to-end tests read real error lines under each."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from harness_cli import REPO, python, run_cli

PACKAGE = REPO / "acousticbench"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*(?![\w])")
ALONE = re.compile(r"--[\w-]+(=\S*)?")  # one flag and nothing else: an argv element or an option's name, not a line
PROGRAM = re.compile(r"(?<![\w.-])((?:\./)?(?:scripts/|bench/)?[\w-]+\.(?:py|sh)|acousticbench(?: [a-z][\w-]*){1,2}|"
                     r"lmms-eval|sbatch|git|docker|pip|vllm|vLLM|curl)(?![\w-])")
OTHERS = {"lmms-eval", "sbatch", "git", "docker", "pip", "vllm", "vLLM", "curl"}  # not ours: their flags are theirs
SCRIPTS = {"scripts/rerun_nones.py": "acousticbench rerun", "scripts/rejudge.py": "acousticbench rejudge",
           "scripts/compare_runs.py": "acousticbench compare", "scripts/leaderboard.py": "acousticbench leaderboard",
           "scripts/docker_serve.sh": "acousticbench serve", "docker_serve.sh": "acousticbench serve"}
RUN_PATH = ("acousticbench run", "run.py")
# the modules (or "module:function") whose lines other commands than a run print, and those commands
PRINTED_BY = {
    "acousticbench.cli": ("run.py",),  # run.py's own parser, its command flags and their combinations
    "acousticbench.cli.subcommands": ("acousticbench *",),  # each subcommand's help
    "acousticbench.cli.leaderboard": ("acousticbench leaderboard",),
    "acousticbench.cli.compare": ("acousticbench compare",),
    "acousticbench.cli.rerun": ("acousticbench rerun",),
    "acousticbench.cli.relabel": ("acousticbench rejudge",),
    "acousticbench.api.rerun": ("acousticbench rerun",),
    "acousticbench.api.relabel": ("acousticbench rejudge",),
    "acousticbench.serve": ("acousticbench serve",),
    "acousticbench.serve.hf_server": ("python -m acousticbench.serve.hf_server",),
    "acousticbench.serve.adapters": ("python -m acousticbench.serve.hf_server",),
    "acousticbench.serve.local:main": ("python -m acousticbench.serve.local",),
    "acousticbench.tools.report": ("acousticbench report", "run.py"),
    "acousticbench.benchmarks.acoustic.face:AcousticFace": ("acousticbench pack build", "run.py"),  # its pack's lines
    "acousticbench.benchmarks.acoustic.judge.__main__": ("acousticbench judge extract", "acousticbench judge agree"),
    "acousticbench.benchmarks.acoustic.judge.agreement": ("acousticbench judge agree",),
    "acousticbench.benchmarks.acoustic.judge.llm": (*RUN_PATH, "acousticbench judge extract"),  # a run's and its own
    "acousticbench.benchmarks.audioicl.eval_str": ("acousticbench eval-str",),
}


@pytest.fixture(scope="module")
def commands() -> dict[str, set[str]]:
    """Every command and the flags its parser takes (tests/command_flags.py, in a process of its own)."""
    out = python(str(REPO / "tests" / "command_flags.py"))
    assert out.returncode == 0, out.stderr
    return {command: set(flags) for command, flags in json.loads(out.stdout).items()}


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def printed_lines(path: Path) -> list[tuple[str, int, str]]:
    """(the function it is in, or "", line number, text) of every string literal of a module but its docstrings; an
    f-string is one text, each of its values standing as `{}`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and ast.get_docstring(node, clean=False) is not None}
    inside = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    found = []
    for top in tree.body:
        where = top.name if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ""
        for node in ast.walk(top):
            if isinstance(node, ast.JoinedStr):
                text = "".join(p.value if isinstance(p, ast.Constant) else "{}" for p in node.values)
                found.append((where, node.lineno, text))
            elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                  and id(node) not in inside):
                found.append((where, node.lineno, node.value))
    return found


def named_flags(text: str, commands: dict[str, set[str]]) -> list[tuple[str, str | None]]:
    """Each flag the text names, with the command named before it whose words it is among (None: none; "" for a
    program that is not ours). A command named in backticks reaches to the closing backtick, else to the text's end."""
    marks = []
    for match in PROGRAM.finditer(text):
        word = match.group(1).removeprefix("./")
        word = SCRIPTS.get(word, "run.py" if word.endswith("run.py") else word)
        end = text.find("`", match.end()) if match.start() and text[match.start() - 1] == "`" else -1
        end = len(text) if end < 0 else end
        if word in OTHERS:
            marks.append((match.start(), end, ""))
            continue
        words = word.split()
        known = next((" ".join(words[:n]) for n in (3, 2, 1) if " ".join(words[:n]) in commands), None)
        if known:
            marks.append((match.start(), end, known))
    flags = []
    for match in FLAG.finditer(text):
        before = [command for start, end, command in marks if start < match.start() < end]
        flags.append((match.group(), before[-1] if before else None))
    return flags


def printers(module: str, function: str) -> tuple[str, ...]:
    for key in (f"{module}:{function}", *(module.rsplit(".", n)[0] for n in range(module.count(".")))):
        if key in PRINTED_BY:
            return PRINTED_BY[key]
    return RUN_PATH


def rejected(commands: dict[str, set[str]]) -> list[str]:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        for function, line, text in printed_lines(path):
            if ALONE.fullmatch(text.strip()):
                continue
            for flag, command in named_flags(text, commands):
                if command == "":
                    continue
                by = (command,) if command else printers(module, function)
                takes = [c for c in commands if c.startswith("acousticbench ")] if by == ("acousticbench *",) else by
                if not any(flag in commands[c] for c in takes) if by == ("acousticbench *",) else \
                        not all(flag in commands[c] for c in takes):
                    bad.append(f"{path.relative_to(REPO)}:{line}: {flag} ({' and '.join(by)} rejects it): "
                               f"{text.strip()[:100]!r}")
    return bad


def test_no_line_of_the_package_names_a_flag_the_command_printing_it_rejects(commands):
    bad = rejected(commands)
    assert not bad, "\n".join(bad)


def test_the_finder_tells_whose_flag_a_line_names(commands):
    assert {"--list-models", "--verify-checksums"} <= commands["run.py"] - commands["acousticbench run"]
    line = "see --list-models, or `acousticbench pack verify --task rad`, `run.py --judge rules`; lmms-eval --tasks x"
    assert named_flags(line, commands) == [("--list-models", None), ("--task", "acousticbench pack verify"),
                                           ("--judge", "run.py"), ("--tasks", "")]
    assert printers("acousticbench.run.sweep", "run_sweep") == RUN_PATH
    assert printers("acousticbench.cli.rerun", "main") == ("acousticbench rerun",)


def test_the_old_run_py_hint_is_found_where_a_run_prints_it(commands, tmp_path):
    (tmp_path / "acousticbench" / "run").mkdir(parents=True)
    (tmp_path / "acousticbench" / "run" / "x.py").write_text('raise UserError("unknown model (see --list-models)")\n')
    [(_, line, text)] = printed_lines(tmp_path / "acousticbench" / "run" / "x.py")
    [(flag, command)] = named_flags(text, commands)
    assert command is None and not all(flag in commands[c] for c in RUN_PATH)


def lines_of(out) -> str:
    return out.stdout + out.stderr


def test_under_acousticbench_run_the_lines_name_acousticbench_commands(tmp_path):
    env_free = {"cwd": tmp_path}
    nothing = python("-m", "acousticbench", "run", "--task", "rad", **env_free)
    assert nothing.returncode == 2 and "(see `acousticbench models`)" in nothing.stderr
    assert "`acousticbench pack verify`" in nothing.stderr and "--list-models" not in nothing.stderr
    no_pack = python("-m", "acousticbench", "run", "--model", "Oracle", "--task", "rad", "--archive",
                     str(tmp_path / "none"), **env_free)
    assert no_pack.returncode == 2 and "`acousticbench pack build`" in no_pack.stderr
    assert "`acousticbench pack extract FILE.zip`" in no_pack.stderr and "run.py" not in no_pack.stderr


def test_under_run_py_the_same_lines_name_run_py_flags(tmp_path):
    nothing = run_cli("--task", "rad", cwd=tmp_path)
    assert nothing.returncode == 2 and "(see `python run.py --list-models`)" in nothing.stderr
    assert "`python run.py --verify-checksums`" in nothing.stderr and "acousticbench" not in nothing.stderr
    no_pack = run_cli("--model", "Oracle", "--task", "rad", "--archive", str(tmp_path / "none"), cwd=tmp_path)
    assert no_pack.returncode == 2 and "`python run.py --build-archive`" in no_pack.stderr
    assert "`python run.py --extract FILE.zip`" in no_pack.stderr and "acousticbench pack" not in no_pack.stderr
    usage = run_cli("--help", cwd=tmp_path)
    assert "(see `python run.py --list-models`)" in " ".join(usage.stdout.split())


def test_the_python_api_names_the_console_commands(tmp_path):
    from acousticbench import evaluate
    from acousticbench.core.errors import UserError

    with pytest.raises(UserError, match=r"see `acousticbench models`"):
        evaluate(task="rad", archive=tmp_path)
