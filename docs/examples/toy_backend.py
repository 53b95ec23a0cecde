"""A toy model backend: it answers every question with the first answer the question allows, without listening.

Register it under a model name, then run it like any model of the harness:

    import acousticbench
    from toy_backend import FirstAnswer

    acousticbench.register_model("Toy", FirstAnswer, description="answers the first option, without listening")
    acousticbench.evaluate(model="Toy", task="rad", archive="archive")
"""
from __future__ import annotations

from acousticbench.core.records import Prompt, Reply
from acousticbench.models.base import BackendBase


class FirstAnswer(BackendBase):
    backend_name = "toy"  # in its run folders' names: Toy-rad-toy-seed42-<time>
    default_concurrency = 4  # questions in flight at once

    async def answer(self, prompt: Prompt) -> Reply:
        # A real backend sends prompt.text and the WAV files of prompt.audio to its model here, and raises
        # acousticbench.core.errors.BackendError(..., retryable=...) when the model fails: the engine retries.
        first = (prompt.answer_space or ["A"])[0]  # AcousticBench: A; AudioICL: the task's first label
        return Reply(text=f"The answer is {first}.", model_id=self.name)
