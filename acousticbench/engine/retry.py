"""One retry policy for every remote call (model requests and the LLM judge): backoff with jitter, Retry-After.
A 429/503 (BackendError.overloaded) from a server the engine sees answering is the server saying "later", not a
failure of the question: it is waited out and asked again without using up the question's attempts, against a budget
of its own. Without the engine's slots (the judge), or from a server that refuses everything, it is a failed attempt."""
from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from acousticbench.core.errors import AcousticBenchError, BackendError
from acousticbench.core.memory_limit import out_of_memory
from acousticbench.core.environment import env_number

T = TypeVar("T")


def _env(variable: str, default: float):
    return field(default_factory=lambda: env_number(variable, default))


@dataclass(frozen=True)
class RetryPolicy:
    """Retry settings; each default can be changed with an environment variable (tests zero the waits)."""

    max_attempts: int = field(default_factory=lambda: int(env_number("ACOUSTICBENCH_MAX_ATTEMPTS", 4)))
    base_delay_s: float = _env("ACOUSTICBENCH_RETRY_BASE_DELAY", 1.0)
    max_delay_s: float = _env("ACOUSTICBENCH_RETRY_MAX_DELAY", 60.0)
    timeout_s: float = _env("ACOUSTICBENCH_REQUEST_TIMEOUT", 120.0)
    max_retry_after_s: float = _env("ACOUSTICBENCH_MAX_RETRY_AFTER", 120.0)
    max_overloads: int = field(default_factory=lambda: int(env_number("ACOUSTICBENCH_MAX_RATE_LIMITED", 50)))

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Exponential backoff with full jitter; a server's Retry-After wins when it asks for longer."""
        backoff = rng.uniform(0, min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))
        return max(backoff, retry_after or 0.0)


@dataclass(frozen=True)
class Attempted:
    """What a call came to after its retries: a value, or the last classified failure."""

    value: object
    error: str | None
    attempts: int  # requests sent, those refused with 429/503 included
    latency_s: float | None  # of the attempt that succeeded


async def _once(call: Callable[[], Awaitable[T]], timeout_s: float) -> T | BackendError:
    try:
        if hasattr(asyncio, "timeout"):  # Python 3.11+: no extra task per request, unlike wait_for
            async with asyncio.timeout(timeout_s):
                return await call()
        return await asyncio.wait_for(call(), timeout_s)
    except (asyncio.TimeoutError, TimeoutError):
        return BackendError(f"no answer within {timeout_s:g} s (ACOUSTICBENCH_REQUEST_TIMEOUT)", retryable=True)
    except BackendError as err:
        return err
    except (AcousticBenchError, asyncio.CancelledError):
        raise
    except RecursionError:  # an SDK's own json.loads of a body nested past its depth: malformed, asked again
        return BackendError("the server sent a malformed response (nested deeper than Python's JSON reader can "
                            "follow, which no answer is)", retryable=True)
    except Exception as err:  # a backend bug must not kill a long run; it is stored on the record instead
        if out_of_memory(err):  # the process's, not the question's: every later question would fail alike
            raise
        return BackendError(f"unexpected {type(err).__name__} in the backend: {err}", retryable=False)


async def _attempt(call: Callable[..., Awaitable[T]], policy: RetryPolicy, ticket) -> tuple[object, float]:
    started = time.perf_counter()
    result = await _once(call if ticket is None else lambda: call(ticket.endpoint), policy.timeout_s)
    return result, time.perf_counter() - started


async def with_retries(call: Callable[..., Awaitable[T]], policy: RetryPolicy, rng_key: str,
                       sleep: Callable[[float], Awaitable[object]] = asyncio.sleep, slots=None,
                       on_retry: Callable[[str], None] | None = None) -> Attempted:
    """Call until it succeeds, fails for good (a non-retryable BackendError), or attempts run out; never retry
    what cannot succeed, and never wait longer than the policy allows for a server's Retry-After. With `slots`
    (acousticbench.engine.concurrency.Slots) `call` gets the endpoint and the slots learn each attempt's latency or
    overload; a question waits out a 429/503 without its slot (the server asked for fewer) and backs off from a
    failure keeping it, so a failing server is not asked by ever more questions at once. `on_retry` gets a line for
    each failed attempt that is asked again (run.log)."""
    rng = None  # jitter derived from the item, so runs do not depend on timing; made at the first wait
    sent = failures = overloads = moved = 0
    ticket = None
    try:
        while True:
            if slots is not None and ticket is None:
                ticket = await slots.acquire()
            result, latency = await _attempt(call, policy, ticket)
            sent += 1
            error = result if isinstance(result, BackendError) else None
            if error is None or (error.retry_after or 0.0) > policy.max_retry_after_s:
                ticket = slots.release(ticket, None if error else latency, error) if slots else None
            if error is None:
                return Attempted(result, None, sent, round(latency, 4))
            if (error.retry_after or 0.0) > policy.max_retry_after_s:
                return Attempted(None, f"{error} (the server asked to wait {error.retry_after:g} s, over the "
                                       f"{policy.max_retry_after_s:g} s limit ACOUSTICBENCH_MAX_RETRY_AFTER)", sent, None)
            if error.gone and slots is not None and moved < policy.max_overloads:
                moved += 1  # its endpoint ended (a replica left): back to the queue for another, attempts untouched
                slots.cancel(ticket)
                ticket = None
                if on_retry is not None:
                    on_retry(f"attempt {sent}: {error}; asked again on another endpoint (its attempts untouched)")
                continue
            if error.overloaded and error.retryable and slots is not None and not slots.failing and \
                    overloads < policy.max_overloads:
                overloads += 1  # "later": wait what the server asked (or back off), attempts untouched, no slot
                ticket = slots.release(ticket, None, error)
                rng = rng or random.Random(rng_key)
                wait = error.retry_after if error.retry_after is not None else policy.delay(overloads, None, rng)
                if on_retry is not None:
                    on_retry(f"attempt {sent}: {error}; the server asked for later: waiting {wait:.2f} s "
                             "(its attempts untouched)")
                await sleep(wait)
                continue
            failures += 1
            if not error.retryable or failures >= policy.max_attempts:
                ticket = slots.release(ticket, None, error) if slots else None
                later = f" (after {overloads} answers of 'later', 429/503, waited out)" if overloads else ""
                return Attempted(None, f"{error}{later}", sent, None)
            ticket = slots.keep(ticket, error) if slots else None
            rng = rng or random.Random(rng_key)
            wait = policy.delay(failures, error.retry_after, rng)
            if on_retry is not None:
                on_retry(f"attempt {sent} failed: {error}; asking again in {wait:.2f} s")
            await sleep(wait)
    finally:
        if ticket is not None:  # cancelled on the wire or while backing off on a slot
            slots.cancel(ticket)
