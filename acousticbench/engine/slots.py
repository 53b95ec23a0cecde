"""The slots of one model session: each request waits here for room on one of the model's endpoints, each endpoint
with its own limit (acousticbench.engine.concurrency), and hands back what it came to so the limits can learn."""
from __future__ import annotations

import asyncio
import collections

from acousticbench.core.reporter import warn
from acousticbench.engine.concurrency import Lane, Setting, Ticket
from acousticbench.engine.open_files import release_connections, room_for_connections


class Slots:
    """The slots of one model session over its endpoints; a request takes the lane with the most room. Endpoints may
    come (add) and go (retire) during a run, as the replicas of a registry do; a retired lane keeps its counts."""

    def __init__(self, names: list[str], setting: Setting):
        self.setting = setting
        self.held = room_for_connections(setting.maximum * len(names))
        bounded = setting.within(max(1, self.held // len(names)))
        if bounded.maximum < setting.start:
            _say_bounded(setting, bounded.maximum * len(names))
        self.lanes = [Lane(i, name, bounded) for i, name in enumerate(names)]
        self.spread = len(names) > 1  # requests name their endpoint to the backend
        self.retired: set[int] = set()
        self._failed: BaseException | None = None
        self._waiters: collections.deque[asyncio.Future] = collections.deque()
        self._next = 0
        self._refusals_in_a_row = 0
        self._peak = sum(lane.limit for lane in self.lanes)

    @classmethod
    def fixed(cls, n: int) -> "Slots":
        return cls(["-"], Setting(False, n, n))

    def add(self, name: str) -> int:
        """A new endpoint (a replica that came up): its own lane, and the queue's waiters may take it at once."""
        fit = room_for_connections(self.setting.maximum)
        self.held += fit
        self.lanes.append(Lane(len(self.lanes), name, self.setting.within(fit)))
        self.spread = True
        self._wake()
        return len(self.lanes) - 1

    def close(self) -> None:
        """The session ended: its room in the open-files limit is another session's."""
        release_connections(self.held)
        self.held = 0

    def retire(self, index: int) -> None:
        """An endpoint that ended: no request is given its slots again (those on the wire come back through keep)."""
        self.retired.add(index)

    @property
    def live(self) -> int:
        return len(self.lanes) - len(self.retired)

    def fail(self, error: BaseException) -> None:
        """No endpoint will come: every question waiting for a slot, and each that asks later, gets `error`."""
        self._failed = error
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(error)

    def _take(self) -> Ticket | None:
        """A slot on the lane with the most room (ties in turn), reserved at once so no one else counts it free."""
        best, n = None, len(self.lanes)
        for k in range(n):
            lane = self.lanes[(self._next + k) % n]
            if lane.index not in self.retired and lane.room() > 0 and (best is None or lane.room() > best.room()):
                best = lane
        if best is None:
            return None
        self._next = (best.index + 1) % n
        return best.start()

    async def acquire(self) -> Ticket:
        if self._failed is not None:
            raise self._failed
        ticket = None if self._waiters else self._take()
        if ticket is not None:
            return ticket
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed a slot it will not use: give it to the next
                self.cancel(waiter.result())
            raise

    def release(self, ticket: Ticket, latency_s: float | None, error=None) -> None:
        """Give the slot back with what the request came to: the latency of an answer, else its BackendError (an
        overloaded one, 429/503, says the server wants fewer); None for neither (cancelled). Returns None."""
        self._learn(ticket, latency_s, error)
        self._wake()

    def keep(self, ticket: Ticket, error) -> Ticket | None:
        """Learn from a failed attempt but keep the slot (a new ticket on the same endpoint) for the retry; None when
        that endpoint has ended."""
        self._learn(ticket, None, error)
        if ticket.lane.index in self.retired:  # its endpoint ended: the retry waits for a slot elsewhere
            self._wake()
            return None
        kept = ticket.lane.start()  # before anyone waiting is woken: the slot never stands free
        self._wake()
        return kept

    def cancel(self, ticket: Ticket) -> None:
        """A request given up before it came to anything (Ctrl-C, an aborted run): the slot only."""
        ticket.lane.cancel(ticket)
        self._wake()

    def _learn(self, ticket: Ticket, latency_s: float | None, error) -> None:
        lane, overloaded = ticket.lane, bool(getattr(error, "overloaded", False))
        if overloaded:
            self._refusals_in_a_row += 1
        elif latency_s is not None:
            self._refusals_in_a_row = 0
        self._peak = max(self._peak, sum(other.limit for other in self.lanes))
        waiting = len(self._waiters) if len(self.lanes) == 1 else \
            len(self._waiters) * lane.limit // max(1, sum(other.limit for other in self.lanes))  # its share of the queue
        lane.finish(ticket.seq, ticket.epoch, latency_s, overloaded, getattr(error, "retry_after", None), waiting)

    @property
    def failing(self) -> bool:
        """Refusals with no answer between them, more than two full rounds of the most ever in flight: a server
        that says "later" to everything is failing, not busy, and its 429/503s count against the questions."""
        return self._refusals_in_a_row > 2 * self._peak + 10

    def _wake(self) -> None:
        while self._waiters:
            if self._waiters[0].done():  # cancelled while waiting
                self._waiters.popleft()
                continue
            ticket = self._take()
            if ticket is None:
                return
            self._waiters.popleft().set_result(ticket)

    def summary(self) -> dict:
        return {"mode": "auto" if self.setting.auto else "fixed", "start": self.setting.start,
                "maximum": self.setting.maximum,
                "endpoints": [{**lane.summary(), **({"ended": True} if lane.index in self.retired else {})}
                              for lane in self.lanes]}


def sustained_line(model: str, summary: dict) -> str:
    """The closing line: what was in flight at each endpoint (on average and at most, never the limit in its place),
    the limit it ran under, and how often the server said 'later'."""
    parts = []
    for lane in summary["endpoints"]:
        where = "" if lane["endpoint"] == "-" else f" at {lane['endpoint']}"
        refused = f", {lane['overloaded']} refused (429/503) and asked again" if lane["overloaded"] else ""
        parts.append(f"{model}{where}: {lane['in_flight_mean']:g} requests in flight on average, "
                     f"{lane['in_flight_max']} at most ({summary['mode']} limit {summary['start']} -> {lane['final']}, "
                     f"highest {lane['peak']}{refused}), {lane['answers_per_s']:g} answers/s")
    return "; ".join(parts)


def _say_bounded(setting: Setting, most: int) -> None:
    """One line: fewer requests go at once than asked, as this process may not open more files."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    asked = f"--concurrency {setting.start}" if not setting.auto else f"--concurrency auto's start of {setting.start}"
    warn(f"note: {asked} is more than this process's open-files limit of {soft} leaves room for: at most {most} "
          "requests in flight (raise it with `ulimit -n`).")
