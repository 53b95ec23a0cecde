"""Option: one of a benchmark's own settings on a shared tool (rejudge.py, rerun_nones.py), declared in its package
and made a flag by the tool, so that no tool names a benchmark's settings."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Option:
    """A flag a tool adds for a benchmark; its value goes back to the benchmark under `dest` (None: not given)."""

    flag: str  # "--judge-model"
    help: str
    default: Any = None
    choices: tuple[str, ...] | None = None
    url: bool = False  # an http(s) URL, checked before the tool touches any file

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")
