"""A batching engine behind the test server, shaped as vLLM serves: continuous batching in steps of a + b x batch,
at most `max_batch` sequences at once and a queue beyond it, each new sequence's prefill added to the step it joins
(cheaper for a prompt seen before when the prefix cache is on)."""
from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    """What one engine step costs and how many sequences it takes; `steps` decode steps answer a request."""

    step_s: float  # a: the step's fixed cost (weights read once for the whole batch)
    per_seq_s: float  # b: what each sequence in the batch adds to a step
    max_batch: int  # sequences at once; the rest wait in the queue
    steps: int = 5  # decode steps per answer
    prefill_s: float = 0.0  # added to the step a new sequence joins
    cached_prefill_s: float | None = None  # the same for a prompt seen before; None: no prefix cache

    @classmethod
    def parse(cls, text: str) -> "Shape":
        """'a,b,max_batch[,steps[,prefill[,cached_prefill]]]' in seconds, e.g. '0.05,0.0003,256'."""
        fields = [float(x) for x in text.split(",")]
        a, b, batch, *rest = fields
        steps = int(rest[0]) if rest else 5
        prefill = rest[1] if len(rest) > 1 else 0.0
        cached = rest[2] if len(rest) > 2 else None
        return cls(a, b, int(batch), steps, prefill, cached)

    def goodput(self, batch: int) -> float:
        """Answers per second with `batch` sequences always running (prefill aside): what a full batch can give."""
        batch = min(batch, self.max_batch)
        return batch / (self.steps * (self.step_s + self.per_seq_s * batch))


class Sequence:
    """One request in the engine: steps still to run, and the event its handler thread waits on."""

    __slots__ = ("left", "prompt", "done")

    def __init__(self, steps: int, prompt: str):
        self.left, self.prompt, self.done = steps, prompt, threading.Event()


class BatchingEngine:
    """One thread stepping every running sequence at once; `serve` blocks its caller until its answer is ready."""

    def __init__(self, shape: Shape):
        self.shape = shape
        self._queue: collections.deque[Sequence] = collections.deque()
        self._cond = threading.Condition()
        self._seen: set[str] = set()  # prompts in the prefix cache
        self.most_running = 0
        threading.Thread(target=self._loop, daemon=True, name="batching-engine").start()

    def serve(self, prompt: str) -> None:
        sequence = Sequence(self.shape.steps, prompt)
        with self._cond:
            self._queue.append(sequence)
            self._cond.notify()
        sequence.done.wait()

    def _prefill_s(self, prompt: str) -> float:
        if self.shape.cached_prefill_s is not None and prompt in self._seen:
            return self.shape.cached_prefill_s
        self._seen.add(prompt)
        return self.shape.prefill_s

    def _loop(self) -> None:
        running: list[Sequence] = []
        while True:
            with self._cond:
                while not running and not self._queue:
                    self._cond.wait()
                joined = []
                while self._queue and len(running) < self.shape.max_batch:
                    joined.append(self._queue.popleft())
                    running.append(joined[-1])
            self.most_running = max(self.most_running, len(running))
            prefill = sum(self._prefill_s(s.prompt) for s in joined)
            time.sleep(self.shape.step_s + self.shape.per_seq_s * len(running) + prefill)
            for sequence in running:
                sequence.left -= 1
                if sequence.left <= 0:
                    sequence.done.set()
            running = [s for s in running if s.left > 0]
