"""What an AcousticBench MANIFEST.json must hold, and whether a task's questions are what it says: its shape and
fields, counts that add up, one question per id, each with the task's clips in the format the pack promises."""
from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from acousticbench.packs.audio_format import SAMPLE_FORMATS, ClipFormat
from acousticbench.benchmarks.acoustic.records import Question

# What the open pack promises when a manifest declares no "audio": 16 kHz PCM16, mono but dir's one stereo clip
OPEN_PACK_AUDIO = {"sample_rate": 16_000, "sample_format": "PCM_16", "channels": 1, "task_channels": {"dir": 2}}


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class TaskEntry(_Strict):
    title: str
    clips: int = Field(ge=1)
    n_scored: int = Field(ge=0)
    n_diagnostic: int = Field(ge=0)


class Counts(_Strict):
    scored: int = Field(ge=0)
    diagnostic: int = Field(ge=0)
    questions: int = Field(ge=0)


class AudioPromise(_Strict):
    """The format of every clip; `task_channels` names the tasks whose clips have another channel count."""

    sample_rate: int = Field(gt=0)
    sample_format: Literal[SAMPLE_FORMATS]  # type: ignore[valid-type]
    channels: int = Field(ge=1)
    task_channels: dict[str, int] = {}


class Manifest(_Strict):
    benchmark: str
    version: str
    tasks: dict[str, TaskEntry]
    counts: Counts
    sha256: dict[str, str]
    audio: AudioPromise | None = None


def manifest_problem(data: Any) -> str | None:
    """Why `data` (a parsed MANIFEST.json) is not a pack's manifest, in a few words; None when it is."""
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else f"{first['msg']} (a JSON object with benchmark, version, " \
                                                        "tasks, counts and sha256)"
    tasks = manifest.tasks.values()
    sums = {"scored": sum(t.n_scored for t in tasks), "diagnostic": sum(t.n_diagnostic for t in tasks)}
    sums["questions"] = sums["scored"] + sums["diagnostic"]
    for name, total in sums.items():
        if getattr(manifest.counts, name) != total:
            return f"counts.{name} is {getattr(manifest.counts, name)} but its tasks add up to {total}"
    return None


def promised_format(manifest: dict[str, Any], task: str) -> ClipFormat:
    """The format the pack promises for a task's clips: its manifest's "audio", else the open pack's."""
    promise = AudioPromise.model_validate(manifest.get("audio") or OPEN_PACK_AUDIO)
    return ClipFormat(promise.sample_rate, promise.sample_format, promise.task_channels.get(task, promise.channels))


def pack_problems(manifest: dict[str, Any], task: str, questions: list[Question]) -> list[tuple[str | None, str]]:
    """(question id or None for the whole file, why) for every way a task's questions differ from its manifest."""
    entry = manifest["tasks"][task]
    problems: list[tuple[str | None, str]] = []
    for qid, n in Counter(q.id for q in questions).items():
        if n > 1:
            problems.append((qid, f"the id appears {n} times (each question is asked and scored once)"))
    for q in questions:
        if q.task != task:
            problems.append((q.id, f"names task {q.task!r} but lies in the file of task {task!r}"))
        if len(q.audio) != entry["clips"]:
            problems.append((q.id, f"has {len(q.audio)} clips, MANIFEST.json says {task} has {entry['clips']}"))
    kinds = Counter(q.kind for q in questions)
    for kind, key in (("scored", "n_scored"), ("diagnostic", "n_diagnostic")):
        if kinds[kind] != entry[key]:
            problems.append((None, f"holds {kinds[kind]} {kind} questions, MANIFEST.json says {entry[key]} "
                                   f"(tasks.{task}.{key})"))
    return problems
