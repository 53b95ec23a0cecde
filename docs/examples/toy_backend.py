"""A toy model backend: it answers every question with the first answer the question allows, without listening."""
from acousticbench.core.records import Prompt, Reply
from acousticbench.models.base import BackendBase


class FirstAnswer(BackendBase):
    backend_name = "toy"  # in its run folders' names: Toy-rad-toy-seed42-<time>

    async def answer(self, prompt: Prompt) -> Reply:
        # A real backend sends prompt.text and the WAV files of prompt.audio to its model, and raises
        # BackendError(..., retryable=...) when the model fails: the engine retries, never the backend.
        first = (prompt.answer_space or ["A"])[0]  # AcousticBench: A; AudioICL: the task's first label
        return Reply(text=f"The answer is {first}.", model_id=self.name)
