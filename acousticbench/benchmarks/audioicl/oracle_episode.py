"""How the AudioICL Oracle reads an episode back from its prompt: the demos, the query, their clips and labels."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from acousticbench.benchmarks.audioicl.prompts import read_lines
from acousticbench.benchmarks.audioicl.scoring import last_int
from acousticbench.core.errors import BackendError
from acousticbench.core.records import Prompt


@dataclass
class Shot:
    """A demo or the query as the prompt shows it: clips by role ('audio' for a one-clip shot) and their labels."""

    clips: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str | None] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return self.clips.get("audio") or list(self.clips.values())[-1]

    @property
    def label(self) -> str | None:
        return self.labels.get("audio") if "audio" in self.labels else list(self.labels.values())[-1]


@dataclass
class Episode:
    bank: dict[str, str]
    demos: list[Shot]
    query: Shot


_TAG = re.compile(r"^(?:Letter (?P<letter>\S+)|Demo Audio (?P<single>\d+)|Demo (?P<multi>\d+) (?P<role>.+)"
                  r"|Query(?: (?P<qrole>.+))?)$")


def read_episode(prompt: Prompt) -> Episode:
    """The bank, demos and query from the prompt's tagged lines: exactly what the model is shown."""
    bank: dict[str, str] = {}
    demos: dict[int, Shot] = {}
    query = Shot()
    for line in read_lines(prompt):
        m = _TAG.match(line.tag)
        if m is None:
            continue
        if m.group("letter"):
            bank[m.group("letter")] = line.audio
            continue
        if m.group("single") or m.group("multi"):
            shot = demos.setdefault(int(m.group("single") or m.group("multi")), Shot())
            role = m.group("role") or "audio"
        else:
            shot, role = query, (m.group("qrole") or "Query")
            role = "audio" if role == "Audio" else role
        shot.clips[role], shot.labels[role] = line.audio, line.label
    if not query.clips:
        raise BackendError(f"the Oracle found no query in the prompt of {prompt.question_id}.", retryable=False)
    return Episode(bank, [demos[i] for i in sorted(demos)], query)


def int_label(shot: Shot) -> int | None:
    return last_int(shot.label)
