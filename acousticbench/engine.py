"""The async executor: bounded concurrency, per-request timeouts, retries with backoff, streaming records."""
from __future__ import annotations

import asyncio
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from acousticbench.errors import AcousticBenchError, BackendError
from acousticbench.judge import judge_reply
from acousticbench.models.base import Backend
from acousticbench.records import JudgeInfo, Prompt, Question, Record, Reply


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    timeout_s: float = 120.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Exponential backoff with full jitter; a server's Retry-After wins when it asks for longer."""
        backoff = rng.uniform(0, min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))
        return max(backoff, retry_after or 0.0)


class RunAborted(AcousticBenchError):
    """Too many questions failed; what finished is on disk."""


@dataclass(frozen=True)
class Outcome:
    reply: Reply | None
    error: str | None
    attempts: int
    latency_s: float | None


async def ask(backend: Backend, prompt: Prompt, policy: RetryPolicy) -> Outcome:
    """One question to one backend: retry what can succeed, never what cannot."""
    rng = random.Random(f"retry:{prompt.seed}:{prompt.question_id}")
    for attempt in range(1, policy.max_attempts + 1):
        started = time.perf_counter()
        try:
            reply = await asyncio.wait_for(backend.answer(prompt), policy.timeout_s)
            return Outcome(reply, None, attempt, round(time.perf_counter() - started, 4))
        except (asyncio.TimeoutError, TimeoutError):
            error, retryable, retry_after = f"timed out after {policy.timeout_s:g} s", True, None
        except BackendError as err:
            error, retryable, retry_after = str(err), err.retryable, err.retry_after
        if not retryable or attempt == policy.max_attempts:
            return Outcome(None, error, attempt, None)
        await asyncio.sleep(policy.delay(attempt, retry_after, rng))
    raise AssertionError("unreachable")


def make_record(question: Question, prompt: Prompt, model: str, outcome: Outcome) -> Record:
    """Join a question and what came back into the Record that goes to disk."""
    if outcome.reply is None:
        chosen, status, judge = None, "error", JudgeInfo(method="none")
    else:
        judgement = judge_reply(outcome.reply)
        chosen, status = judgement.chosen, judgement.status
        judge = JudgeInfo(method=judgement.method, model=judgement.model)
    return Record(
        id=question.id, task=question.task, split=question.split, kind=question.kind, model=model,
        seed=prompt.seed, prompt=question.prompt, audio=question.audio,
        response=outcome.reply.text if outcome.reply else None,
        chosen=chosen, answer=question.answer,
        correct=None if question.answer is None else chosen == question.answer,
        status=status, error=outcome.error, attempts=outcome.attempts, latency_s=outcome.latency_s,
        usage=outcome.reply.usage if outcome.reply else {}, judge=judge, meta=question.meta,
        notes=outcome.reply.notes if outcome.reply else [],
    )


async def run_questions(
    items: list[tuple[Question, Prompt]],
    backend: Backend,
    model: str,
    *,
    concurrency: int,
    policy: RetryPolicy,
    on_record: Callable[[Record], None],
    max_error_rate: float = 1.0,
    progress: bool | None = None,
) -> list[Record]:
    """Ask every question, hand each Record to `on_record` as it completes, return them sorted by id."""
    from tqdm import tqdm

    semaphore = asyncio.Semaphore(concurrency)
    records: list[Record] = []
    bar = tqdm(total=len(items), unit="q", disable=not (sys.stderr.isatty() if progress is None else progress))

    async def one(question: Question, prompt: Prompt) -> None:
        async with semaphore:
            outcome = await ask(backend, prompt, policy)
        record = make_record(question, prompt, model, outcome)
        records.append(record)
        on_record(record)
        bar.update(1)
        errors = sum(r.status == "error" for r in records)
        if len(records) >= 20 and errors / len(records) > max_error_rate:
            raise RunAborted(
                f"{errors} of {len(records)} requests failed (over --max-error-rate {max_error_rate:.0%}); "
                f"last error: {record.error}"
            )

    tasks = [asyncio.ensure_future(one(question, prompt)) for question, prompt in items]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        # an abort or Ctrl-C: stop what is still queued; finished records are already on disk
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        bar.close()
    return sorted(records, key=lambda r: r.id)
