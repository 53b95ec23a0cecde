"""What every backend is: one async call from a Prompt to a Reply, or a classified BackendError."""
from __future__ import annotations

import asyncio
from typing import Protocol

from acousticbench.core.records import Prompt, Reply


class Backend(Protocol):
    """A backend never retries and never invents an answer; the engine owns retries and concurrency."""

    backend_name: str  # short name in run folder names: "local", "openai", "gemini", ...
    default_concurrency: int

    async def open(self) -> None:
        """Connect before the first question: check the server answers (bounded wait), learn the served
        model id. Raises UserError with the fix (missing key, endpoint down) before any question is sent;
        close() is called even when open() fails."""
        ...

    async def answer(self, prompt: Prompt) -> Reply: ...

    async def close(self) -> None: ...

    def provenance(self) -> dict:
        """What config.json should record about this backend (endpoint, served model id); never a key."""
        ...


class LocalBackend:
    """A model computed in this process; CPU-bound work runs in a worker thread."""

    backend_name = "local"
    default_concurrency = 2

    def __init__(self, name: str, **settings):
        self.name = name

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def respond(self, prompt: Prompt) -> str:
        raise NotImplementedError

    async def answer(self, prompt: Prompt) -> Reply:
        text = await asyncio.to_thread(self.respond, prompt)
        return Reply(text=text, model_id=self.name)

    def provenance(self) -> dict:
        return {"backend": self.backend_name, "model_id": self.name}
