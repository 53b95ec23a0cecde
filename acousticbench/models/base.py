"""What every backend is: one async call from a Prompt to a Reply, or a classified BackendError."""
from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol

from acousticbench.core.records import Prompt, Reply


class Backend(Protocol):
    """Everything the engine, the run path and the tools use of a backend; nothing else is ever read of one.

    A backend never retries and never invents an answer: the engine owns retries and concurrency. The registry
    (acousticbench.run.catalog) makes one as `Class(name, **settings)`: the model's name, then its registered
    settings and the run's flags (endpoint, api_model, temperature, max_tokens, ...), which a backend that has no use
    for them takes and ignores. BackendBase gives every member but `backend_name` and `answer` a default."""

    backend_name: str
    """Short name in run folder names ("local", "openai", "served", ...): <Model>-<task>-<backend_name>-seed<N>."""

    default_concurrency: int
    """Questions in flight at once unless --concurrency says; auto's starting point. A class attribute: a dry run's
    plan reads it without making the backend."""

    adaptive_concurrency: bool
    """True: --concurrency defaults to auto, which finds a remote server's or an API's capacity as the run goes."""

    max_concurrency: int | None
    """auto's ceiling per endpoint, for a server known to take only a few at once; None: ACOUSTICBENCH_MAX_CONCURRENCY."""

    retry_settings: Mapping[str, Any]
    """RetryPolicy fields this backend changes (a person answering is never timed out); empty: the engine's own."""

    merge_over: int | None
    """A prompt with more clips than this goes as one merged clip (models/wire.prompt_clips); None: never merged. The
    record's `sent` fingerprints what went on the wire, so it reads this."""

    async def open(self) -> None:
        """Connect before the first question: check the server answers (bounded wait), learn the served
        model id. Raises UserError with the fix (missing key, endpoint down) before any question is sent;
        close() is called even when open() fails."""
        ...

    async def answer(self, prompt: Prompt, endpoint: int | None = None) -> Reply:
        """The model's reply to one question, or BackendError saying whether asking again can help. `endpoint` is
        the index into endpoint_names() whose slot the engine gave the question; it is passed only to a backend that
        names several, so one with a single endpoint may leave it out of its signature."""
        ...

    async def close(self) -> None:
        """Release what open() made; called once per session, also after a failed open()."""
        ...

    def provenance(self) -> dict:
        """What config.json should record about this backend (endpoint, served model id); never a key."""
        ...

    def endpoint_names(self) -> list[str]:
        """One name per server it spreads questions over (each gets its own concurrency limit); read after open()."""
        ...

    async def watch_endpoints(self, slots: Any) -> None:
        """While the run goes, add to the engine's slots each endpoint that comes up and retire each that ends (a
        registry of replicas); runs until cancelled. A backend with fixed endpoints returns at once."""
        ...

    def check_prompts(self, prompts: list[Prompt]) -> None:
        """Before any backend opens: refuse with UserError a run whose prompts it cannot take (too many clips)."""
        ...

    def presentation_order(self, items: list[tuple[Any, Prompt]]) -> list[tuple[Any, Prompt]]:
        """The order to ask a run's remaining questions in (records stay sorted by id, whatever the order)."""
        ...


def missing_members(backend: type) -> list[str]:
    """The members of the Backend protocol a backend class lacks: the run path reads them all, never probes."""
    declared = set(Backend.__annotations__) | {name for name in vars(Backend) if not name.startswith("_")}
    return sorted(name for name in declared if not hasattr(backend, name))


class BackendBase:
    """The Backend protocol's defaults: a backend that subclasses this writes `backend_name` and `answer`, and
    whatever else it needs."""

    backend_name: str
    default_concurrency = 1
    adaptive_concurrency = False
    max_concurrency: int | None = None
    retry_settings: Mapping[str, Any] = MappingProxyType({})
    merge_over: int | None = None

    def __init__(self, name: str, **settings: Any):
        self.name = name

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def provenance(self) -> dict:
        return {"backend": self.backend_name, "model_id": self.name}

    def endpoint_names(self) -> list[str]:
        return ["-"]  # one endpoint, or none (a model computed in this process)

    async def watch_endpoints(self, slots: Any) -> None:
        return None

    def check_prompts(self, prompts: list[Prompt]) -> None:
        return None

    def presentation_order(self, items: list[tuple[Any, Prompt]]) -> list[tuple[Any, Prompt]]:
        return items


class LocalBackend(BackendBase):
    """A model computed in this process; CPU-bound work runs in a worker thread."""

    backend_name = "local"
    default_concurrency = 2

    def respond(self, prompt: Prompt) -> str:
        raise NotImplementedError

    async def answer(self, prompt: Prompt) -> Reply:
        text = await asyncio.to_thread(self.respond, prompt)
        return Reply(text=text, model_id=self.name)
