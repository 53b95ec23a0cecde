"""Reference baselines that ignore the audio: Random (seeded) and Always-A."""
from __future__ import annotations

import random

from acousticbench.models.base import LocalBackend
from acousticbench.records import Prompt


class RandomChoice(LocalBackend):
    """Chance level; the same (seed, question) always gets the same letter, whatever the concurrency."""

    def respond(self, prompt: Prompt) -> str:
        # str seeds hash with SHA-512 inside random.Random: stable across processes and PYTHONHASHSEED
        return random.Random(f"{prompt.seed}:{prompt.question_id}").choice("AB")


class AlwaysA(LocalBackend):
    def respond(self, prompt: Prompt) -> str:
        return "A"
