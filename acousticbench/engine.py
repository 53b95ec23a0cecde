"""The async executor: bounded concurrency, per-request timeouts, retries with backoff, streaming records."""
from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from acousticbench.errors import AcousticBenchError, BackendError, UserError
from acousticbench.judge import JudgeFailed, judge_reply
from acousticbench.models.base import Backend
from acousticbench.records import Judgement, JudgeInfo, Prompt, Question, Record, Reply


def env_number(variable: str, default: float, *, minimum: float = 0.0) -> float:
    """A number from the environment; a bad value is a one-line user error naming the variable."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{variable}={text!r} is not a number; unset it or give e.g. {variable}={default:g}.") from None
    if value < minimum:
        raise UserError(f"{variable} must be {minimum:g} or more, got {value:g}.")
    return value


def _env(variable: str, default: float, minimum: float = 0.0):
    return field(default_factory=lambda: env_number(variable, default, minimum=minimum))


@dataclass(frozen=True)
class RetryPolicy:
    """Retry settings; each default can be changed with an environment variable (tests zero the waits)."""

    max_attempts: int = field(default_factory=lambda: int(env_number("ACOUSTICBENCH_MAX_ATTEMPTS", 4, minimum=1)))
    base_delay_s: float = _env("ACOUSTICBENCH_RETRY_BASE_DELAY", 1.0)
    max_delay_s: float = _env("ACOUSTICBENCH_RETRY_MAX_DELAY", 60.0)
    timeout_s: float = _env("ACOUSTICBENCH_REQUEST_TIMEOUT", 120.0, minimum=0.001)
    max_retry_after_s: float = _env("ACOUSTICBENCH_MAX_RETRY_AFTER", 120.0)

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


async def _attempt(backend: Backend, prompt: Prompt, policy: RetryPolicy) -> Reply | BackendError:
    """One request: a Reply, or the failure classified (timeouts are worth retrying; backend bugs are not)."""
    try:
        if hasattr(asyncio, "timeout"):  # Python 3.11+: no extra task per request, unlike wait_for
            async with asyncio.timeout(policy.timeout_s):
                return await backend.answer(prompt)
        return await asyncio.wait_for(backend.answer(prompt), policy.timeout_s)
    except (asyncio.TimeoutError, TimeoutError):
        return BackendError(f"no answer within {policy.timeout_s:g} s (ACOUSTICBENCH_REQUEST_TIMEOUT)", retryable=True)
    except BackendError as err:
        return err
    except (AcousticBenchError, asyncio.CancelledError):
        raise
    except Exception as err:  # a backend bug must not kill a long run; it is stored on the record instead
        return BackendError(f"unexpected {type(err).__name__} in the backend: {err}", retryable=False)


async def ask(backend: Backend, prompt: Prompt, policy: RetryPolicy) -> Outcome:
    """One question to one backend: retry what can succeed, never what cannot."""
    rng = random.Random(f"retry:{prompt.seed}:{prompt.question_id}")
    for attempt in range(1, policy.max_attempts + 1):
        started = time.perf_counter()
        result = await _attempt(backend, prompt, policy)
        if isinstance(result, Reply):
            return Outcome(result, None, attempt, round(time.perf_counter() - started, 4))
        if not result.retryable or attempt == policy.max_attempts:
            return Outcome(None, str(result), attempt, None)
        if (result.retry_after or 0.0) > policy.max_retry_after_s:
            # waiting less than the server asked is pointless, waiting longer stalls the run
            return Outcome(None, f"{result} (the server asked to wait {result.retry_after:g} s, over the "
                                 f"{policy.max_retry_after_s:g} s limit ACOUSTICBENCH_MAX_RETRY_AFTER)", attempt, None)
        await asyncio.sleep(policy.delay(attempt, result.retry_after, rng))
    raise AssertionError("unreachable")


class Judge(Protocol):
    async def judge(self, prompt: str, reply: Reply) -> Judgement: ...


async def judge_outcome(judge: Judge, question: Question, outcome: Outcome) -> tuple[Judgement | None, str | None]:
    """The label of a reply, and why there is none when the judge gave no verdict (the record stays unparsed and
    says the judge failed, so it is not mistaken for an answer nobody could read)."""
    if outcome.reply is None:
        return None, None
    try:
        return await judge.judge(question.prompt, outcome.reply), None
    except JudgeFailed as err:
        return err.judgement, f"judge failed: {err}"


def make_record(question: Question, prompt: Prompt, model: str, outcome: Outcome,
                judgement: Judgement | None = None, judge_error: str | None = None) -> Record:
    """Join a question, what came back and how it was judged into the Record that goes to disk."""
    if outcome.reply is None:
        chosen, status, judge = None, "error", JudgeInfo(method="none")
    else:
        judgement = judgement or judge_reply(outcome.reply, question.prompt)
        chosen, status = judgement.chosen, judgement.status
        judge = JudgeInfo(method=judgement.method, model=judgement.model)
    return Record(
        id=question.id, task=question.task, split=question.split, kind=question.kind, model=model,
        seed=prompt.seed, prompt=question.prompt, audio=question.audio,
        response=outcome.reply.text if outcome.reply else None,
        chosen=chosen, answer=question.answer,
        correct=None if question.answer is None else chosen == question.answer,
        status=status, error=outcome.error or judge_error, attempts=outcome.attempts, latency_s=outcome.latency_s,
        usage=outcome.reply.usage if outcome.reply else {}, judge=judge, meta=question.meta,
        notes=outcome.reply.notes if outcome.reply else [],
    )


class _ErrorBudget:
    """Stops a run whose failures exceed --max-error-rate, once enough requests have finished to tell."""

    MIN_RECORDS = 20

    def __init__(self, max_rate: float):
        self.max_rate, self.done, self.errors = max_rate, 0, 0

    def count(self, record: Record) -> None:
        self.done += 1
        self.errors += record.status == "error"
        if self.done >= self.MIN_RECORDS and self.errors / self.done > self.max_rate:
            raise RunAborted(
                f"{self.errors} of {self.done} questions failed, over --max-error-rate {self.max_rate:.0%}; "
                f"last error: {record.error}"
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
    judge: Judge | None = None,
    make_record: Callable[..., Any] = make_record,
) -> list[Record]:
    """Ask every question, judge each reply (rules only without `judge`), hand each Record to `on_record` as it
    completes, and return them sorted by id. `make_record(item, prompt, model, outcome)` builds the record of
    another benchmark (AudioICL episodes); it must have `.id`, `.status` and `.error`."""
    from tqdm import tqdm

    semaphore = asyncio.Semaphore(concurrency)
    records: list[Record] = []
    budget = _ErrorBudget(max_error_rate)
    bar = tqdm(total=len(items), unit="q", disable=not (sys.stderr.isatty() if progress is None else progress))

    async def one(question: Question, prompt: Prompt) -> None:
        async with semaphore:
            outcome = await ask(backend, prompt, policy)
        # without a judge, make_record applies the rules itself (AudioICL records are scored, not judged)
        record = (make_record(question, prompt, model, outcome) if judge is None
                  else make_record(question, prompt, model, outcome, *await judge_outcome(judge, question, outcome)))
        records.append(record)
        on_record(record)  # written before anything else can fail, so a kill loses nothing finished
        bar.update(1)
        budget.count(record)

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
