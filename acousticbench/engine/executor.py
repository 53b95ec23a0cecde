"""The async executor: bounded concurrency, retries (acousticbench.engine.retry), records streamed as they complete.

The engine knows nothing of judging or scoring: a benchmark hands it `to_record`, which turns an item, its Prompt
and the Outcome into the record that goes to disk (the A/B judge for AcousticBench, string scoring for AudioICL).
Several runs (the cells of a sweep) share one model's slots (acousticbench.engine.concurrency), so one queue stays full
across them; a request holds a slot only while it is on the wire, never while it waits to be asked again."""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from acousticbench.engine.slots import Slots
from acousticbench.core.errors import AcousticBenchError, UserError
from acousticbench.core.memory_limit import out_of_memory
from acousticbench.core.stats import wilson_interval
from acousticbench.models.base import Backend
from acousticbench.core.records import Prompt, Reply
from acousticbench.engine.retry import RetryPolicy, with_retries

__all__ = ["ErrorBudget", "Outcome", "RetryPolicy", "RunAborted", "Slots", "ask", "progress_bar",
           "run_items"]


class RunAborted(AcousticBenchError):
    """Too many questions failed; what finished is on disk."""


@dataclass(frozen=True)
class Outcome:
    reply: Reply | None
    error: str | None
    attempts: int
    latency_s: float | None


async def ask(backend: Backend, prompt: Prompt, policy: RetryPolicy, slots: Slots | None = None,
              log: Callable[[str], None] | None = None) -> Outcome:
    """One question to one backend: retry what can succeed, never what cannot; with several endpoints, on the
    endpoint whose slot it got. `log` gets a line per failed attempt that is asked again."""
    key = f"retry:{prompt.seed}:{prompt.question_id}"
    on_retry = None if log is None else (lambda line: log(f"{prompt.question_id}: {line}"))
    if slots is not None:  # asked at each attempt: an endpoint may join while a question waits
        result = await with_retries(lambda endpoint: backend.answer(prompt, endpoint=endpoint) if slots.spread
                                    else backend.answer(prompt), policy, key, slots=slots, on_retry=on_retry)
    else:
        result = await with_retries(lambda: backend.answer(prompt), policy, key, on_retry=on_retry)
    return Outcome(result.value, result.error, result.attempts, result.latency_s)


class ErrorBudget:
    """Stops a run early only on evidence that its error rate is over --max-error-rate: at least MIN_RECORDS
    finished and the lower end of the Wilson 99.9% interval of the rate above the budget. A few early failures are not
    evidence; a server that fails every request is (it stops after MIN_RECORDS). A finished run whose final rate is
    over the budget is reported by the run path (exit 1)."""

    MIN_RECORDS = 10
    Z = 3.2905267314918945  # 99.9%: a long run checks after every record, so each check must be strict

    def __init__(self, max_rate: float):
        self.max_rate, self.done, self.errors = max_rate, 0, 0
        self.last_error: str | None = None  # the check may fire on a record that succeeded: name the last failure

    def count(self, record: Any) -> None:
        self.done += 1
        if record.status == "error":
            self.errors += 1
            self.last_error = record.error or self.last_error
        if self.max_rate < 1.0 and self.done >= self.MIN_RECORDS and self.errors and wilson_interval(self.errors, self.done, self.Z).low > self.max_rate:
            raise RunAborted(
                f"{self.errors} of {self.done} questions failed, so the error rate is over --max-error-rate "
                f"{self.max_rate:.0%} (99.9% confident); last error: {self.last_error}"
            )


ToRecord = Callable[[Any, Prompt, Outcome], Awaitable[Any]]
Feed = Callable[[Callable[[Any, Prompt], Awaitable[Any]]], Awaitable[None]]  # makes items as it goes, asks each


async def recorded(to_record: ToRecord, item: Any, prompt: Prompt, outcome: Outcome) -> Any:
    """The item's record; a failure while labelling or recording one answer (a bug, a reply no one foresaw) is that
    item's error record, never the end of a run: the others go on, and rerun asks it again."""
    try:
        return await to_record(item, prompt, outcome)
    except (UserError, KeptOnInterrupt):
        raise  # a setting to fix stops the command, as it would before the first question; an interrupt ends it
    except Exception as err:  # noqa: BLE001
        if out_of_memory(err):  # the process's, not the answer's: it ends the run, with what was written kept
            raise
        failed = f"unexpected {type(err).__name__} while recording the reply: {str(err)[:300]}"
        return await to_record(item, prompt, Outcome(None, failed, outcome.attempts, outcome.latency_s))


def progress_bar(total: int, progress: bool | None):
    """One plain bar (re-scoring); without bars (the reporter's: None asks it) a NoBar, and tqdm is never imported."""
    from acousticbench.core.reporter import current

    if not (current().progress() if progress is None else progress):
        from acousticbench.engine.progress import NoBar

        return NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="q")


class KeptOnInterrupt(Exception):
    """Raised by a record maker cancelled while it labels an answer (the run is being interrupted): `record` is the
    answer labelled as far as it could be without waiting, and is written before the run ends."""

    def __init__(self, record: Any):
        super().__init__("interrupted while labelling")
        self.record = record


async def run_items(items: list[tuple[Any, Prompt]], backend: Backend, *, slots: Slots,
                    policy: RetryPolicy, to_record: ToRecord, on_record: Callable[[Any], None],
                    max_error_rate: float = 1.0, bar: Any = None, log: Callable[[str], None] | None = None,
                    feeds: Sequence[Feed] = ()) -> list[Any]:
    """Ask every item, hand each record to `on_record` as it completes (written before anything else can fail, so
    a kill loses nothing finished), and return the records sorted by id. An abort (error budget) or a Ctrl-C
    cancels what is still queued. `log` (run.log) gets each retried attempt. `feeds`: coroutines that make their
    items as they go (an adaptive run's tracks), each given ask(item, prompt) -> its record."""
    records: list[Any] = []
    budget = ErrorBudget(max_error_rate)

    async def one(item: Any, prompt: Prompt) -> Any:
        outcome = await ask(backend, prompt, policy, slots, log)
        try:
            record = await recorded(to_record, item, prompt, outcome)
        except KeptOnInterrupt as kept:  # stopped while labelling: the answer, paid for, is written as far as read
            records.append(kept.record)
            on_record(kept.record)
            raise asyncio.CancelledError from None
        records.append(record)
        on_record(record)
        if bar is not None:
            bar.update(1)
        budget.count(record)
        return record

    tasks = [asyncio.ensure_future(one(item, prompt)) for item, prompt in items]
    tasks += [asyncio.ensure_future(feed(one)) for feed in feeds]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return sorted(records, key=lambda r: r.id)
