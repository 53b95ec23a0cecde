"""One model's run context, the same for a sweep and for `rerun`: its backend made from the run's settings, the prompts
checked against its limits before it opens, then opened once with the retry policy it asks for (a person answering
is never timed out nor asked twice), its slots (one queue) and its endpoints watched while the runs ask, closed once."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acousticbench.core.records import Prompt
from acousticbench.engine.concurrency import Setting
from acousticbench.engine.retry import RetryPolicy
from acousticbench.engine.slots import Slots


def model_backend(model: str, overrides: dict[str, Any], archive: Path | None = None) -> Any:
    """The model's backend, made (not opened) with the run's settings: its endpoint, model id, decoding, what its
    benchmark needs; a missing key or extra is one line here, before anything opens."""
    from acousticbench.run.catalog import get_model

    return get_model(model, archive).create(**overrides)


def check_prompts(backend: Any, prompts: Iterable[Prompt]) -> None:
    """Refuse, before the backend opens, prompts it cannot take (too many clips for its server)."""
    backend.check_prompts(list(prompts))


@dataclass(frozen=True)
class ModelContext:
    """An open backend with what every request through it shares."""

    backend: Any
    slots: Slots
    policy: RetryPolicy  # the engine's, with what the backend changes (Backend.retry_settings)


@asynccontextmanager
async def opened(backend: Any, concurrency: int | str | None) -> AsyncIterator[ModelContext]:
    """The backend opened once (closed also when opening failed: it may have opened clients), its slots under the
    --concurrency setting, and its endpoints watched (replicas that come and go) until the block ends."""
    slots = None
    try:
        await backend.open()
        slots = Slots(backend.endpoint_names(), Setting.of(concurrency, backend))
        watching = asyncio.ensure_future(backend.watch_endpoints(slots))
        try:
            yield ModelContext(backend, slots, RetryPolicy(**backend.retry_settings))
        finally:
            watching.cancel()
    finally:
        if slots is not None:
            slots.close()
        await backend.close()
