"""The README's and docs/ pages' code blocks as tests/test_docs.py runs them: parsed by the conventions docs/README.md
states (```bash commands, `#>` checks, `<!-- doc-test: ... -->` annotations), and run as a reader's shell would."""
from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness_cli import REPO, _run

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\S*)\s*$")
ANNOTATION = re.compile(r"^<!-- doc-test: (slow|not run): (.+) -->$")
LANGUAGES = ("bash", "python", "text")  # commands, Python, and what is only shown
SHELL_ONLY = re.compile(r"[|&;<>(){}`$~]|^\w+=")  # pipes, lists, redirects, expansions, VAR=x prefixes: for bash


@dataclass(frozen=True)
class Command:
    line: str  # as the shell gets it, continuation lines joined
    where: str  # page:line, for failure messages
    checks: tuple[str, ...] = ()  # text its output must contain
    exit: int = 0


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    mode: str  # "run", "slow" or "not run"
    why: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    def commands(self) -> list[Command]:
        """The block's commands, each with the `#>` lines under it."""
        commands: list[Command] = []
        lines = self.text.splitlines()
        i = 0
        while i < len(lines):
            number, line = self.line + 1 + i, lines[i].strip()
            i += 1
            if line.startswith("#>"):
                assert commands, f"{self.page.name}:{number}: a #> line with no command above it"
                check = line[2:].strip()
                last = commands[-1]
                exit_ = re.fullmatch(r"exit (\d+)", check)
                commands[-1] = Command(last.line, last.where, last.checks + (() if exit_ else (check,)),
                                       int(exit_.group(1)) if exit_ else last.exit)
                continue
            if not line or line.startswith("#"):
                continue
            while line.endswith("\\") and i < len(lines):
                line = line[:-1] + " " + lines[i].strip()
                i += 1
            commands.append(Command(line, f"{self.page.relative_to(REPO)}:{number}"))
        return commands


def blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, with the annotation on the line before it."""
    found, lines, i = [], page.read_text(encoding="utf-8").splitlines(), 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start, language = i, match.group(1)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        before = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        note = ANNOTATION.match(before)
        found.append(Block(page, start + 1, language, note.group(1) if note else "run", note.group(2) if note else "",
                           "\n".join(lines[start + 1:end])))
        i = end + 1
    return found


class Shell:
    """A reader's shell in one folder: `python FILE.py ...` is forked from the suite's warm interpreter (what a new
    process would do, at a fifth of the cost), anything else goes to bash; `export NAME=VALUE` sets the environment
    of the commands after it, as it would in the reader's shell."""

    def __init__(self, folder: Path, env: dict[str, str]):
        self.folder, self.env = folder, env
        console = shutil.which("acousticbench", path=env.get("PATH"))  # the console script pip installed
        forkable = console and open(console, "rb").read(2) == b"#!"  # a Python file, not a launcher binary
        self.scripts = {"python": None, **({"acousticbench": console} if forkable else {})}

    def run(self, line: str, timeout: float = 180) -> subprocess.CompletedProcess:
        tokens = shlex.split(line, comments=True)
        if tokens[0] == "export" and len(tokens) == 2 and "=" in tokens[1]:
            name, value = tokens[1].split("=", 1)
            self.env[name] = re.sub(r"\$\{?(\w+)\}?", lambda m: self.env.get(m.group(1), ""), value)
            return subprocess.CompletedProcess(tokens, 0, "", "")
        if self._forkable(line, tokens):
            return self._fork(tokens, timeout)
        return subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=self.folder, env=self.env, text=True,
                              capture_output=True, timeout=timeout)

    def python(self, code: str, timeout: float = 180) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-"], input=code, cwd=self.folder, env=self.env, text=True,
                              capture_output=True, timeout=timeout)

    def _forkable(self, line: str, tokens: list[str]) -> bool:
        plain = re.sub(r">\s*\S+\s*(#.*)?$", "", line)  # one stdout redirect at the end is handled here
        quoted_glob = re.search(r"[\"'][^\"']*[*?\[][^\"']*[\"']", line)
        script = tokens[0] in self.scripts and (tokens[0] != "python" or tokens[1:2] and tokens[1].endswith(".py"))
        return bool(script) and not SHELL_ONLY.search(plain) and not quoted_glob

    def _fork(self, tokens: list[str], timeout: float) -> subprocess.CompletedProcess:
        out = None
        if ">" in tokens:
            at = tokens.index(">")
            tokens, out = tokens[:at], tokens[at + 1]
        if tokens[0] == "python":  # python FILE.py ARGS
            tokens = tokens[1:]
            argv = [sys.executable, str(self.folder / tokens[0])]
        else:  # the console script, a Python file pip wrote: what its own interpreter would run
            argv = [sys.executable, self.scripts[tokens[0]]]
        for token in tokens[1:]:  # the shell's pathname expansion: sorted matches, or the word as it is
            matches = sorted(glob.glob(token, root_dir=self.folder)) if re.search(r"[*?\[]", token) else []
            argv += matches or [token]
        result = _run(argv, self.folder, self.env, timeout)
        if out is not None:
            (self.folder / out).write_text(result.stdout)
            result = subprocess.CompletedProcess(result.args, result.returncode, "", result.stderr)
        return result


def explain(command: Command, result: subprocess.CompletedProcess) -> str:
    return (f"{command.where}: `{command.line}` exited {result.returncode}\n"
            f"--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}")


def run_blocks(page_blocks: list[Block], shell: Shell) -> None:
    """Run blocks in order; every command exits as documented and prints what its #> lines name."""
    for block in page_blocks:
        if block.language == "python":
            result = shell.python(block.text)
            assert result.returncode == 0, explain(Command("python -", block.where), result)
            continue
        for command in block.commands():
            result = shell.run(command.line)
            assert result.returncode == command.exit, explain(command, result)
            for check in command.checks:
                assert check in result.stdout + result.stderr, f"{command.where}: no {check!r} in the output\n" + \
                    explain(command, result)


def links(page: Path) -> list[tuple[str, str]]:
    """(target file, anchor) of every relative Markdown link of a page."""
    found = re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]+))?\)", page.read_text(encoding="utf-8"))
    return [(target, anchor) for target, anchor in found if not re.match(r"\w+:", target)]


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def python_path() -> str:
    """PATH with this interpreter's folder first, so a page's `python` is the suite's (the project's .venv)."""
    return os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
