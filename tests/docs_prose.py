"""What the README's and docs/ pages' prose states about the repository, as tests/test_docs.py checks it: every path
it names in backticks exists, and every list of a type's fields it marks is that type's fields (docs/README.md says
how a page marks one)."""
from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

from harness_cli import REPO

FENCED = re.compile(r"^```.*?^```", flags=re.S | re.M)
CODE = re.compile(r"`([^`]+)`")
SOURCE = re.compile(r"\.(py|sh|md|toml|html|js|css|yaml|yml|cfg|ini)$")  # a file of the repository, by its name
NOT_A_PATH = re.compile(r"[\s<>*?{}$\[\]|=,@]|://|^[-~]")  # a placeholder, a glob, a flag, a URL, a home path
# files a page's commands write, named without their folder: nothing of the repository by that name
WRITTEN = {"utils.py": "lmms-eval's task hooks, written by export-lmms-tasks"}
# a marker in backticks is one shown, not one used
FIELDS = re.compile(r"(?<!`)<!-- fields: ([\w.]+)(?:\s+beyond\s+([\w.]+))?\s*-->(.*?)<!-- /fields -->", flags=re.S)
IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")
SKIPPED = {".git", "results", "archive", "__pycache__"}  # what a checkout holds that is not the repository


def prose(page: Path) -> str:
    """The page without its fenced blocks (those are run, not read) and without its HTML comments."""
    return re.sub(r"<!--.*?-->", "", FENCED.sub("", page.read_text(encoding="utf-8")), flags=re.S)


def repository_files(repo: Path = REPO) -> set[str]:
    """Every file of the checkout, relative to it, but virtual environments, caches and what runs wrote."""
    found = set()
    for path in repo.rglob("*"):
        parts = path.relative_to(repo).parts
        if path.is_file() and not (set(parts) & SKIPPED or any(p.startswith(".venv") for p in parts)):
            found.add("/".join(parts))
    return found


def named_paths(text: str) -> list[str]:
    """Every backticked word of the text that reads as a path of the repository: `acousticbench/run/sweep.py`,
    `docs/results.md`, `run.py`, `cli/flags.py` (`module.py:function` names the file)."""
    names = []
    for token in CODE.findall(text):
        token = re.sub(r"^(\w[\w./-]*\.py):\w+$", r"\1", token.strip().rstrip(".,;:)")).removeprefix("./")
        if not token or NOT_A_PATH.search(token) or ":" in token:
            continue
        if "/" in token or SOURCE.search(token):
            names.append(token)
    return names


def missing_paths(text: str, files: set[str], repo: Path = REPO) -> list[str]:
    """The paths the text names that are not there. A path from a top-level entry of the repository must exist as
    written; a shorter one (`run/sweep.py`, `stimuli/level.py`, `api.py`) must end some file's path."""
    top = {name.split("/")[0] for name in files}
    missing = []
    for name in named_paths(text):
        if name.split("/")[0] in top:
            if not (repo / name).exists():
                missing.append(name)
        elif SOURCE.search(name) and name not in WRITTEN:
            if not any(f == name or f.endswith("/" + name) for f in files):
                missing.append(name)
    return missing


def type_named(dotted: str) -> type:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def fields_of(kind: type) -> set[str]:
    """A pydantic model's or a dataclass's fields."""
    if dataclasses.is_dataclass(kind):
        return {f.name for f in dataclasses.fields(kind)}
    return set(kind.model_fields)


def stated_lists(page_text: str) -> list[tuple[str, str | None, set[str]]]:
    """Each marked list of the page: (type, the type whose fields it leaves out or None, the fields it names): every
    backticked identifier between `<!-- fields: TYPE -->` (or `<!-- fields: TYPE beyond BASE -->`) and
    `<!-- /fields -->`, a backticked comma list counting as its words and `{...}` as no field."""
    lists = []
    for match in FIELDS.finditer(page_text):
        words = set()
        for token in CODE.findall(match.group(3)):
            words |= {w.strip() for w in re.sub(r"\{[^}]*\}", "", token).split(",") if IDENTIFIER.match(w.strip())}
        lists.append((match.group(1), match.group(2), words))
    return lists


def list_mismatches(page_text: str) -> list[str]:
    """Where a marked list differs from its type's fields: what it lacks and what it names that the type has not."""
    found = []
    for dotted, beyond, words in stated_lists(page_text):
        fields = fields_of(type_named(dotted)) - (fields_of(type_named(beyond)) if beyond else set())
        if words != fields:
            found.append(f"{dotted}{f' beyond {beyond}' if beyond else ''}: the list lacks {sorted(fields - words)}, "
                         f"names {sorted(words - fields)} that it has not")
    return found
