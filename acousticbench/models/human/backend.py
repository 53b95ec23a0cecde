"""The Human backend: the engine asks it one question at a time like any model, and the reply is what a person
answered on the listening page (the option clicked, or the label typed), with how often they played the clips and
how long they took. The listener's id, output device and calibration go to config.json only."""
from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from acousticbench.core.reporter import warn
from acousticbench.models.base import BackendBase
from acousticbench.models.human.listening import Listening
from acousticbench.models.human.page import PageServer
from acousticbench.models.limits import MERGE_GAP_S
from acousticbench.core.records import DEFAULT_SEED, Prompt, Reply
from acousticbench.core.environment import env_number

FAREWELL_S = 0.5
WAIT_S = 30 * 86_400.0  # a person may pause for as long as they like: the run waits (Ctrl-C, then --resume)


class Human(BackendBase):
    backend_name = "human"
    default_concurrency = 1  # one question on the page at a time
    retry_settings = {"timeout_s": WAIT_S, "max_attempts": 1}  # never timed out, never asked twice

    def __init__(self, name: str, **settings: Any):
        self.name = name
        # the page plays A, then B, with the gap the harness puts between merged clips; tests shorten it
        self.gap_s = env_number("ACOUSTICBENCH_HUMAN_GAP_S", MERGE_GAP_S)
        self.port = int(env_number("ACOUSTICBENCH_HUMAN_PORT", 0))
        self.seed = DEFAULT_SEED
        self.listening: Listening | None = None
        self.server: PageServer | None = None
        self._turn = asyncio.Lock()

    def check_prompts(self, prompts: list[Prompt]) -> None:
        """Before the run: the seed the calibration's tone pair is drawn from (the run's)."""
        if prompts:
            self.seed = prompts[0].seed

    def presentation_order(self, items: list[tuple[Any, Prompt]]) -> list[tuple[Any, Prompt]]:
        """The run's questions in an order drawn from the seed, question by question, so --resume continues the same
        order with what is left; the records stay sorted by id."""
        if self.listening is not None:
            self.listening.planned += len(items)
        return sorted(items, key=lambda item: hashlib.sha256(f"{item[1].seed}:{item[1].question_id}".encode()).digest())

    async def open(self) -> None:
        """Serve the page, print its address and wait for the listener's id and the calibration trial."""
        self.listening = Listening(asyncio.get_running_loop(), self.seed, self.gap_s)
        self.server = PageServer(self.listening, self.port)
        warn(f"Human: open {self.server.url} in a browser on this machine to listen and answer; the run waits for "
              "you (Ctrl-C stops it, --resume continues).")
        await self.listening.ready

    async def answer(self, prompt: Prompt) -> Reply:
        async with self._turn:  # even with --concurrency N, the page shows one question at a time
            return await self.listening.ask(prompt)

    async def close(self) -> None:
        if self.listening is not None:
            self.listening.finish()
            if self.listening.listener is not None:
                await asyncio.sleep(FAREWELL_S)  # the page polls while it waits: let it see that the run has finished
        if self.server is not None:
            await asyncio.to_thread(self.server.stop)

    def provenance(self) -> dict[str, Any]:
        listening = self.listening
        return {"backend": self.backend_name, "model_id": self.name, "page": self.server.url if self.server else None,
                "listener": listening.listener if listening else None,
                "output_device": listening.device if listening else None,
                "calibration": listening.calibration() if listening else None, "gap_s": self.gap_s,
                "order": "by sha256 of seed:question id (the same on --resume)"}
