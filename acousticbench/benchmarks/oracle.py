"""The Oracle: an ideal observer for every benchmark, answering from the audio (and, for in-context tasks, the
demos) alone; each benchmark supplies its own observer through the seam, so the Oracle names none."""
from __future__ import annotations

from acousticbench.benchmarks import get_benchmark
from acousticbench.core.errors import BackendError
from acousticbench.models.base import LocalBackend
from acousticbench.core.records import Prompt


class Oracle(LocalBackend):
    """It never sees an item's answer or meta, only the Prompt, and asks the prompt's benchmark how to measure it."""

    def respond(self, prompt: Prompt) -> str:
        observe = getattr(get_benchmark(prompt.benchmark), "ideal_observer", None)
        if observe is None:
            raise BackendError(f"the Oracle has no ideal observer for {prompt.benchmark} items.", retryable=False)
        return observe(prompt)
