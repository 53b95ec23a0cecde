"""The pack stage's format: MANIFEST.json, <task>/questions.jsonl and the audio they point to (build, checks and export
beside it in this folder)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from acousticbench.core.errors import ArchiveError
from acousticbench.benchmarks.acoustic.records import Question
from acousticbench.packs.lines import MANIFEST, UndecodableLine, decoded, text_lines  # noqa: F401 (this pack's API)

BUILD_HINT = ("build the open pack with `acousticbench pack build` or extract one with `acousticbench pack extract "
              "FILE.zip`")


def questions_relpath(task: str) -> str:
    return f"{task}/questions.jsonl"


RUN_MADE = "AcousticBench adaptive"  # a manifest's benchmark where an adaptive run made the pack, in its own folder


def load_manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    if not path.is_file() and (Path(root) / "acousticbench_export.json").is_file():  # packs/hf_dataset.py's INDEX
        raise ArchiveError(f"{root} is a dataset export, not a pack: rebuild the pack from it with "
                           f"`acousticbench pack import {root} --archive PACK`, then pass --archive PACK.")
    if not path.is_file():
        raise ArchiveError(f"no benchmark pack at {root} ({MANIFEST} not found): {BUILD_HINT}, or pass --archive DIR.")
    try:
        data = json.loads(path.read_bytes())
    except json.JSONDecodeError as err:
        raise ArchiveError(f"{path} is not valid JSON (line {err.lineno}): {BUILD_HINT}.") from None
    except UnicodeDecodeError:
        raise ArchiveError(f"{path} is not UTF-8 (the file is damaged): {BUILD_HINT}.") from None
    from acousticbench.benchmarks.acoustic.pack.manifest_schema import manifest_problem

    problem = manifest_problem(data)
    if problem:  # a manifest of another shape is refused here, never a KeyError deep in a run
        raise ArchiveError(f"{path} is not a pack manifest ({problem}): {BUILD_HINT}.")
    return data


def listed_sha256(manifest: dict[str, Any], task: str) -> str | None:
    """The sha256 MANIFEST.json pins for a task's questions file (keyed by its path, or by the task code)."""
    listed = manifest.get("sha256", {})
    return listed.get(questions_relpath(task), listed.get(task))


def manifest_sha256(root: Path) -> str:
    """The hash that pins a whole pack: the manifest lists the hash of every questions file."""
    return hashlib.sha256((root / MANIFEST).read_bytes()).hexdigest()


def parse_question(line: str, path: Path, lineno: int) -> Question:
    try:
        return Question.model_validate_json(line)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        raise ArchiveError(f"{path}:{lineno}: malformed question ({where}: {first['msg']}); fix or rebuild the pack.") from None


def load_questions(root: Path, task: str, undecodable: list | None = None) -> list[Question]:
    """All questions of a task, sorted by id; errors name the file and line. With `undecodable`, lines that are not
    UTF-8 are collected there (as UndecodableLine) instead of raised, and the rest still load."""
    manifest = load_manifest(root)
    if task not in manifest.get("tasks", {}):
        raise ArchiveError(f"task {task!r} is not in the pack at {root} (it has {', '.join(manifest.get('tasks', {})) or 'none'}).")
    path = root / questions_relpath(task)
    if not path.is_file():
        raise ArchiveError(f"{path} not found: the pack at {root} is incomplete; {BUILD_HINT}.")
    questions = [parse_question(line, path, lineno) for lineno, line in text_lines(path, "question", BUILD_HINT, undecodable=undecodable)]
    return sorted(questions, key=lambda q: q.id)


def write_questions(root: Path, task: str, questions: list[Question]) -> str:
    """Write questions.jsonl sorted by id; returns its SHA-256."""
    path = root / questions_relpath(task)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(q.model_dump_json() + "\n" for q in sorted(questions, key=lambda q: q.id)).encode("utf-8")
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def write_manifest(root: Path, benchmark: str, version: str, tasks: dict[str, dict[str, Any]], sha256: dict[str, str],
                   audio: dict[str, Any] | None = None) -> str:
    """Write MANIFEST.json (tasks: code -> {title, clips, n_scored, n_diagnostic}; `audio`: the clips' format, when
    it is not the open pack's, see manifest.py); returns its SHA-256."""
    counts = {
        "scored": sum(t["n_scored"] for t in tasks.values()),
        "diagnostic": sum(t["n_diagnostic"] for t in tasks.values()),
    }
    counts["questions"] = counts["scored"] + counts["diagnostic"]
    manifest = {"benchmark": benchmark, "version": version, "tasks": tasks, "counts": counts, "sha256": dict(sorted(sha256.items()))}
    if audio is not None:
        manifest["audio"] = audio
    data = (json.dumps(manifest, indent=2, sort_keys=True, allow_nan=False) + "\n").encode("utf-8")
    (root / MANIFEST).write_bytes(data)
    return hashlib.sha256(data).hexdigest()
