"""The public AudioICL episode format (meta_k{k}.jsonl): pydantic models and a loader whose errors name file, line and field."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from acousticbench.benchmarks.audioicl import TASKS
from acousticbench.packs.lines import text_lines
from acousticbench.core.errors import ArchiveError

BUILD_HINT = "build the open pack with `acousticbench build-audioicl`, or pass --icl-meta DIR and --icl-base DIR"


def _label_text(value: Any) -> Any:
    # some exports write integer labels as JSON numbers; the scorer works on text either way
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


Label = Annotated[str, BeforeValidator(_label_text)]


class _Model(BaseModel):
    # unknown fields are ignored, so a later release that adds fields still loads
    model_config = ConfigDict(frozen=True, extra="ignore")


class Clip(_Model):
    """One clip of a multi-clip shot (AudioRemap: A, B, MIX; AnomalyDetect: Normal, Anomalous, Query)."""

    role: str = Field(description="What the clip is within its shot, shown to the model as part of its tag.")
    audio_path: str = Field(description="Relative to the base folder (--icl-base).")
    label: Label | None = Field(default=None, description="Shown after the clip; absent on the clip being asked about.")


class Shot(_Model):
    """A demo or the query: one clip (`audio_path`) or several (`clips`)."""

    audio_path: str | None = None
    label: Label | None = Field(default=None, description="The demo's answer; on the query, the gold answer.")
    clips: list[Clip] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> "Shot":
        if (self.audio_path is None) == (self.clips is None):
            raise ValueError("give either audio_path (one clip) or clips (several), not both or neither")
        if self.clips is not None and not self.clips:
            raise ValueError("clips is empty")
        return self

    def audio_paths(self) -> list[str]:
        return [self.audio_path] if self.audio_path is not None else [c.audio_path for c in self.clips or []]


class Episode(_Model):
    """One line of meta_k{k}.jsonl: k demos with their labels, then the query whose label is the gold answer."""

    id: str
    task: str
    demos: list[Shot]
    query: Shot
    object: str | None = Field(default=None, description="AnomalyDetect: the machine the clips come from.")
    instruction: str | None = Field(default=None, description="Replaces the task instruction of the prompt style.")

    @property
    def gt(self) -> str:
        return self.query.label or ""

    def audio_paths(self) -> list[str]:
        return [p for shot in [*self.demos, self.query] for p in shot.audio_paths()]


def meta_path(meta_dir: Path, k: int) -> Path:
    return Path(meta_dir) / f"meta_k{k}.jsonl"


def parse_episode(line: str, path: Path, lineno: int, k: int) -> Episode:
    """One line -> Episode with exactly k demos; an ArchiveError names the file, line and field otherwise."""
    where = f"{path}:{lineno}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as err:
        raise ArchiveError(f"{where}: not valid JSON ({err.msg} at column {err.colno}); fix or remove that line.") from None
    try:
        episode = Episode.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "line"
        raise ArchiveError(f"{where}: field {field}: {first['msg']}; fix that line (episode {data.get('id', '?') if isinstance(data, dict) else '?'}).") from None
    if episode.task not in TASKS:
        raise ArchiveError(f"{where}: field task: unknown AudioICL task {episode.task!r} (known: {', '.join(TASKS)}).")
    if episode.query.label is None:
        raise ArchiveError(f"{where}: field query.label: the query has no gold label (episode {episode.id}).")
    if len(episode.demos) < k:
        raise ArchiveError(f"{where}: field demos: episode {episode.id} has {len(episode.demos)} demos, "
                           f"{path.name} needs {k}.")
    return episode.model_copy(update={"demos": episode.demos[:k]})  # as the public scripts do: the first k


def load_episodes(meta_dir: Path, k: int, tasks: list[str] | None = None) -> list[Episode]:
    """The episodes of meta_k{k}.jsonl (only `tasks`, if given), sorted by id."""
    path = meta_path(meta_dir, k)
    if not path.is_file():
        from acousticbench.benchmarks.audioicl.pack import refuse_export

        refuse_export(Path(meta_dir).parent.parent)  # <archive>/audioicl/meta, where --archive is an export
        raise ArchiveError(f"no AudioICL metadata at {path}: {BUILD_HINT}.")
    episodes: dict[str, Episode] = {}
    for lineno, line in text_lines(path, "episode", BUILD_HINT):
        episode = parse_episode(line, path, lineno, k)
        if episode.id in episodes:
            raise ArchiveError(f"{path}:{lineno}: field id: episode {episode.id} appears twice; ids must be unique.")
        episodes[episode.id] = episode
    wanted = set(tasks) if tasks is not None else None
    return sorted((e for e in episodes.values() if wanted is None or e.task in wanted), key=lambda e: e.id)
