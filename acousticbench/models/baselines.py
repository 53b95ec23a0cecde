"""Reference baselines that ignore the audio: Random (seeded), Always-A and Majority (AudioICL's demos)."""
from __future__ import annotations

import random
from collections import Counter

from acousticbench.core.errors import BackendError, UserError
from acousticbench.models.base import LocalBackend
from acousticbench.core.records import Prompt

TWO_OPTIONS = ("A", "B")  # what a benchmark that names no answer space asks


class RandomChoice(LocalBackend):
    """Chance level: one of the item's answers (its Prompt's answer_space: A or B, an AudioICL task's labels), drawn
    uniformly; the same (seed, question) always gets the same answer, whatever the concurrency."""

    def respond(self, prompt: Prompt) -> str:
        # str seeds hash with SHA-512 inside random.Random: stable across processes and PYTHONHASHSEED; choice()
        # over the list A, B draws what it drew over the string "AB", so AcousticBench's references stand
        return random.Random(f"{prompt.seed}:{prompt.question_id}").choice(prompt.answer_space or TWO_OPTIONS)


class AlwaysA(LocalBackend):
    def respond(self, prompt: Prompt) -> str:
        return "A"


class Majority(LocalBackend):
    """The most common label among the prompt's demos; a tie goes to the tied label the prompt shows first
    (Counter.most_common keeps first-seen order among equal counts), so the answer never depends on the seed."""

    def check_prompts(self, prompts: list[Prompt]) -> None:
        """Before the run: every prompt must show labelled demos, or there is nothing to answer with."""
        for prompt in prompts:
            if not prompt.demo_labels:
                raise UserError(f"{self.name} answers the most common label of an episode's demos, and "
                                f"{prompt.question_id} ({prompt.task}) shows none: run it on tasks with labelled "
                                "demos (AudioICL: --task audioicl).")

    def respond(self, prompt: Prompt) -> str:
        if not prompt.demo_labels:  # asked past check_prompts (a rerun script): a failure, never a made-up answer
            raise BackendError(f"{self.name} has no demo labels to answer {prompt.question_id} with.", retryable=False)
        return Counter(prompt.demo_labels).most_common(1)[0][0]
