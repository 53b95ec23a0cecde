"""Shared pieces of the open AudioICL pack plan: the build seed, per-clip generators, episode ids and episode JSON."""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from acousticbench.benchmarks.audioicl import TASKS

BUILD_SEED = 20_260_302  # the one seed of the open AudioICL pack; changing it changes every file
EPISODES_PER_TASK = 300  # also the id block size, so a reduced pack keeps the full pack's ids
MAX_SHOTS = 5
SR = 16_000


def _key(part: Any) -> int:
    return zlib.crc32(part.encode("utf-8")) if isinstance(part, str) else int(part)


def rng(*key: Any) -> np.random.Generator:
    """An independent generator per key (task, purpose, index): nothing depends on worker count or order."""
    return np.random.default_rng(np.random.SeedSequence([BUILD_SEED, *(_key(k) for k in key)]))


@dataclass(frozen=True)
class ClipJob:
    """One audio file to render: where it goes, which renderer, and its JSON-able parameters (with its seed key)."""

    path: str
    kind: str
    params: dict[str, Any]


@dataclass
class TaskPlan:
    """A task's episodes (with MAX_SHOTS demos; meta_k{k} keeps the first k) and the clips they use."""

    episodes: list[dict[str, Any]]
    clips: dict[str, ClipJob] = field(default_factory=dict)

    def truncated(self, n: int, always: tuple[str, ...] = ()) -> "TaskPlan":
        """The first n episodes and only the clips they (or `always`) use: a reduced pack is a prefix of the full one."""
        episodes = self.episodes[:n]
        used = {p for e in episodes for p in episode_paths(e)} | set(always)
        return TaskPlan(episodes, {p: job for p, job in self.clips.items() if p in used})


def episode_id(task: str, index: int) -> str:
    """'AudioICL00301' for the first AudioCountHard episode: tasks take blocks of 300 in the public order."""
    return f"AudioICL{TASKS.index(task) * EPISODES_PER_TASK + index + 1:05d}"


def single_episode(task: str, index: int, shots: list[tuple[str, str]]) -> dict[str, Any]:
    """One-clip demos and query from (path, label) pairs: the last pair is the query."""
    *demos, (query_path, gt) = shots
    return {"id": episode_id(task, index), "task": task,
            "demos": [{"audio_path": p, "label": label} for p, label in demos],
            "query": {"audio_path": query_path, "label": gt}}


def clip(role: str, path: str, label: str | None) -> dict[str, Any]:
    return {"role": role, "audio_path": path} if label is None else {"role": role, "audio_path": path, "label": label}


def multi_episode(task: str, index: int, demos: list[list[dict]], query: list[dict], gt: str,
                  **extra: Any) -> dict[str, Any]:
    """Multi-clip demos and query; `extra` (AnomalyDetect's object) goes before the demos, as in the public files."""
    return {"id": episode_id(task, index), "task": task, **extra,
            "demos": [{"clips": clips} for clips in demos], "query": {"clips": query, "label": gt}}


def episode_paths(episode: dict[str, Any]) -> list[str]:
    shots = [*episode["demos"], episode["query"]]
    return [c["audio_path"] for s in shots for c in (s["clips"] if "clips" in s else [s])]


def with_shots(episode: dict[str, Any], k: int) -> dict[str, Any]:
    """The episode as meta_k{k}.jsonl has it: the first k demos (demos are nested across k)."""
    return {**episode, "demos": episode["demos"][:k]}


def seeded(params: dict[str, Any], *key: Any) -> dict[str, Any]:
    """`params` with the seed key its renderer derives its generator from."""
    return {**params, "seed": [_key(k) for k in key]}
