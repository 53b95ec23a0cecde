"""Each AudioICL episode's label space and the labels its demos show as answers: what the chance baselines answer
from (Random draws from the space, Majority answers the demos' most common label), carried on the Prompt and never
sent to a model.

A task's labels are every label its episodes use in the run's metadata file (the queries' gold labels and the
demos' labels, over all of the task's episodes whatever --max-samples keeps), so chance is the task's, not the few
labels one episode shows. AudioRemap is the exception: its labels spell three sounds with the two letters the episode
gives A and B, so its space is the 8 spellings of those letters (another episode's letters are no answer to it)."""
from __future__ import annotations

from collections.abc import Iterable
from itertools import product

from acousticbench.benchmarks.audioicl.episodes import Episode, Shot

REMAP = "AudioRemap"
REMAP_ROLES = ("A", "B")  # the clips whose labels are the letters a MIX is spelled with


def _shown(shot: Shot) -> list[str]:
    """The labels a shot shows (a one-clip shot's, or each clip's), in order; the gold of a query included."""
    labels = [shot.label] if shot.audio_path is not None else [c.label for c in shot.clips or []] + [shot.label]
    return [label for label in labels if label]


def _ordered(labels: Iterable[str]) -> list[str]:
    """Distinct labels, numerically where every one is an integer, else as text: a fixed order for seeded draws."""
    distinct = set(labels)
    if all(label.lstrip("-").isdigit() for label in distinct):
        return sorted(distinct, key=int)
    return sorted(distinct)


def task_labels(episodes: Iterable[Episode]) -> dict[str, list[str]]:
    """task -> every label its episodes use, demos and gold labels (AudioRemap's letters and spellings alike)."""
    found: dict[str, list[str]] = {}
    for episode in episodes:
        found.setdefault(episode.task, []).extend(label for shot in [*episode.demos, episode.query]
                                                  for label in _shown(shot))
    return {task: _ordered(labels) for task, labels in found.items()}


def answer_space(episode: Episode, labels: dict[str, list[str]]) -> list[str]:
    """The answers the episode allows: its task's labels, or AudioRemap's 8 spellings of its two letters."""
    if episode.task == REMAP and episode.query.clips:
        letters = {c.role: c.label for c in episode.query.clips if c.role in REMAP_ROLES and c.label}
        if len(letters) == len(REMAP_ROLES):
            return sorted("".join(p) for p in product([letters[r] for r in REMAP_ROLES], repeat=3))
    return list(labels.get(episode.task, []))


def demo_labels(episode: Episode, space: list[str]) -> list[str]:
    """The labels the demos show that are answers (in the space: AudioRemap's MIX spellings, not its letters), in
    the order the prompt shows them."""
    allowed = set(space)
    return [label for demo in episode.demos for label in _shown(demo) if label in allowed]
