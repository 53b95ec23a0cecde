"""How many requests each endpoint of a model gets at once: a fixed cap, or a limit that finds the server's capacity.

`auto` (the default for remote backends) starts at the backend's default (32 for a served model, 256 for a vLLM that
said so, 8 for an API) and, as TCP's slow start, adds one request for each answer, doubling each round trip, while
goodput (answers per second) grows, whatever latency does: a batching server (vLLM) answers more per second with
more in flight even as each answer takes longer, up to the batch it can run at once. Where a round trip's doubling
bought no more answers it settles between the two levels; where goodput fell, or most of a window failed, it goes
back. The first 429/503 sets the limit to what the server held at that moment, and from there it
probes one step up only after holding a few clean windows, and only while the queue is long enough that a refused
probe (its question waits Retry-After) cannot delay the end (see _grow). In the spirit of TCP's slow start and AIMD
and of Netflix's concurrency-limits; a fixed `--concurrency N` is the same limiter that never climbs above N."""
from __future__ import annotations

import collections
import time
from dataclasses import dataclass

from acousticbench.core.environment import env_number

HOLD_WINDOWS = 3  # clean windows at a level before probing one step above it
GAIN = 1.1  # a level well above the last must answer this much faster to count as a gain (noise is about this size)
FALL = 0.9  # under this share of the last level's goodput, more in flight made the server slower: back to it
DEFAULT_RETRY_AFTER_S = 1.0  # what a refused probe is assumed to cost before a server has said
SLOW_START_GROWTH = 2  # slow start's step per round trip, as TCP's: a steeper one slows a sweep of several models
DEFAULT_MAXIMUM = 1024  # per endpoint: vLLM's largest default batch (an H100's); ACOUSTICBENCH_MAX_CONCURRENCY


@dataclass(frozen=True)
class Setting:
    """The concurrency a run asked for: a fixed cap, or auto between 1 and `maximum`."""

    auto: bool
    start: int
    maximum: int

    @classmethod
    def of(cls, requested: int | str | None, backend) -> "Setting":
        """--concurrency N is a fixed cap; auto (the default of backends that talk to a remote server) adapts."""
        if isinstance(requested, int):
            return cls(False, requested, requested)
        if requested == "auto" or (requested is None and backend.adaptive_concurrency):
            # a model whose server is known to take only a few at once (the open-weight table) is never pushed past it
            maximum = backend.max_concurrency or int(env_number("ACOUSTICBENCH_MAX_CONCURRENCY", DEFAULT_MAXIMUM))
            return cls(True, max(1, min(backend.default_concurrency, maximum)), maximum)
        return cls(False, backend.default_concurrency, backend.default_concurrency)

    def within(self, most: int) -> "Setting":
        """The setting with no more than `most` requests in flight (what the open-files limit leaves room for)."""
        return Setting(self.auto, min(self.start, most), min(self.maximum, most))


class Lane:
    """One endpoint's limit and what it has seen; `limit` changes only at window ends and on overloads."""

    def __init__(self, index: int, name: str, setting: Setting, clock=time.monotonic):
        self.index, self.name, self.setting, self.clock = index, name, setting, clock
        self.limit = self.highest = setting.start
        self.inflight: set[int] = set()  # sequence numbers of the requests on the wire
        self.sent = self.answered = self.overloads = 0
        self.known = setting.maximum if not setting.auto else None  # a level the server refused or queued past
        self.step, self.held, self.epoch = 1, 0, 0
        self.probing = False  # the limit was last raised a step above a level that held
        self.retry_after = DEFAULT_RETRY_AFTER_S
        self.started = clock()
        self.timeline: list[tuple[float, int]] = [(0.0, self.limit)]
        self._window_done = self._window_answered = self._window_peak = 0
        self._window_latency, self._window_started = 0.0, self.started
        self._window_overloaded = False
        self._window_size = self.limit  # the limit the window began at: in slow start it grows during the window
        self._last: tuple[int, float] | None = None  # the last clean full window: its limit and answers per second
        self._cuts_in_a_row = 0
        self._clean = 0  # the highest limit that has held a window without refusals
        self._burst: int | None = None  # the epoch of the slow-start burst that was refused
        self.most_inflight, self._inflight_s, self._since = 0, 0.0, self.started  # what was on the wire, not the limit

    def room(self) -> int:
        return self.limit - len(self.inflight)

    def _on_wire(self) -> None:
        """Before what is in flight changes: add the time it held its present count (for the mean in flight)."""
        now = self.clock()
        self._inflight_s += len(self.inflight) * (now - self._since)
        self._since = now

    def start(self) -> "Ticket":
        self._on_wire()
        self.sent += 1
        self.inflight.add(self.sent)
        self.most_inflight = max(self.most_inflight, len(self.inflight))
        self._window_peak = max(self._window_peak, len(self.inflight))
        return Ticket(self, self.sent, self.epoch)

    def finish(self, seq: int, epoch: int, latency_s: float | None, overloaded: bool, retry_after: float | None,
               waiting: int) -> None:
        """What one request came to: an answer's latency (None for other failures) or an overload."""
        self._on_wire()
        self.inflight.discard(seq)
        if overloaded:
            self.overloads += 1
            self.retry_after = retry_after if retry_after is not None else self.retry_after
            return self._refused(epoch)
        if latency_s is not None:
            self.answered += 1
            self._window_answered += 1
            self._window_latency += latency_s
            if self.setting.auto and self.known is None and not self._window_overloaded:
                self._grow(waiting, latency_s)  # slow start: one more for each answer
        self._window_done += 1
        if self._window_done >= min(self._window_size, self.limit):
            self._end_window(waiting)

    def _refused(self, epoch: int) -> None:
        """One cut per round trip, to what is still out when the refusal comes back (the server holds those, or
        refuses them on their way back: refusals come back at once, answers take a round trip). The other refusals
        of a burst each lower it further, never below the last level that held; a refused probe goes back one step;
        at a level that has held, one refusal in a window only stops growth (a server counts its slots a little late)."""
        held = len(self.inflight)
        if epoch == self.epoch and not self.probing and self.limit <= self._clean and not self._window_overloaded:
            self._window_overloaded = True
            return
        if epoch == self.epoch:
            level = max(held, self.limit - self.step) if self.probing else max(held, self._clean)
            self._burst = None if self.probing else epoch
            self._cut(min(self.limit - 1, level))
        elif epoch == self._burst and held < self.limit:
            self.known = max(held, self._clean, 1) + 1
            self._set(self.known - 1, new_epoch=False)

    def _cut(self, level: int) -> None:
        """Back off to what the server held when it refused; cuts that keep coming with no clean window between
        them, at a level that held before, mean a rate limit that what is in flight does not explain: then cut by a
        third each time. (Above a level that held, as after a refused slow-start burst, what is in flight explains
        them: its requests the server counted a little late come back refused in the next round trip.)"""
        if self._cuts_in_a_row >= 2 and self.limit <= self._clean:
            level = min(level, int(self.limit * 0.7))
        self._cuts_in_a_row += 1
        level = max(1, level)
        self.known = level + 1  # the level the server refused
        self._window_overloaded = True
        self.step, self.held, self.probing = 1, 0, False
        self._set(level)

    def _end_window(self, waiting: int) -> None:
        mean = self._window_latency / self._window_answered if self._window_answered else None
        now = self.clock()
        rate = self._window_answered / max(now - self._window_started, 1e-6)  # goodput: answers per second
        done, failed = self._window_done, self._window_done - self._window_answered
        bound = self._window_peak >= self._window_size  # a window that used its whole limit says the limit is short
        overloaded, held = self._window_overloaded, min(self._window_size, self.limit)
        self._window_done = self._window_answered = self._window_peak = 0
        self._window_latency, self._window_started = 0.0, now
        self._window_overloaded, self._window_size = False, self.limit
        self._note()
        if self.setting.auto and 2 * failed > done:  # most of the window failed (not 429/503): ask fewer at once
            return self._knee(max(1, self.limit // 2))
        if overloaded or not bound:
            return
        self._cuts_in_a_row = 0
        self._clean = max(self._clean, held)
        if self.known is not None and self.limit >= self.known:  # the refused level held: the server took more
            self.known = self.limit + 1
            self.step = min(self.step * 2, 64) if self.probing else self.step
        self.probing = False
        before, self._last = self._last, (self.limit, rate)
        if self.setting.auto and before and self.limit >= 1.25 * before[0] and rate < GAIN * before[1]:
            # more in flight, no more answers: the server was full between the two levels (its batch was; the
            # rest queued), or past it when goodput fell
            fell = rate < FALL * before[1]
            return self._knee(before[0] if fell else int((before[0] * self.limit) ** 0.5))
        if self.known is not None:
            self._grow(waiting, mean or self.retry_after)

    def _knee(self, level: int) -> None:
        """Past the knee more in flight only waits longer: back to `level`, and probe above it only now and then."""
        self.known, self.step, self.held = level + 1, 1, 0
        self._last = None
        self._set(level)

    def _grow(self, waiting: int, latency_s: float) -> None:
        if self.limit >= self.setting.maximum:
            return
        if self.known is None:  # slow start: grow while the server keeps up
            target = self.limit + 1
        elif self.limit < self.known - 1:
            target = self.known - 1  # back to the level below the one refused
        else:
            self.held += 1
            if self.held < HOLD_WINDOWS:
                return
            target, self.held, self.probing = self.limit + self.step, 0, True
        target = min(target, len(self.inflight) + waiting)  # no more than there is to send
        drain_s = waiting / self.limit * latency_s  # what is left to send, at the present limit
        # A refused request waits Retry-After, so it delays the end by what that wait outlasts the rest: at most
        # retry_after - drain_s. In slow start nothing says the server is full, and a step that holds saves about
        # 1 - 1/SLOW_START_GROWTH of what is left (half): grow while that loss is no more than that gain. Above a
        # refused level the server is known to be near full: probe only where a refusal cannot delay the end at all.
        if self.known is None:
            enough = self.retry_after / (2 - 1 / SLOW_START_GROWTH)
        else:
            enough = self.retry_after + latency_s
        if target > self.limit and drain_s >= enough:
            # slow start's steps share an epoch: its first refusal is the one that cuts, as a burst's was
            self._set(target, new_epoch=self.known is not None, note=self.known is not None)

    def _set(self, limit: int, new_epoch: bool = True, note: bool = True) -> None:
        limit = max(1, min(limit, self.setting.maximum))
        if limit != self.limit:
            self.limit, self.epoch = limit, self.epoch + new_epoch
            self.highest = max(self.highest, limit)  # the timeline may not note each step of slow start
            if note:
                self._note()

    def _note(self) -> None:
        """The timeline: each change of the limit, and slow start's growth at each window's end."""
        if self.timeline[-1][1] != self.limit:
            at = round(self.clock() - self.started, 3)
            if self.timeline[-1][0] == at:
                self.timeline.pop()
            self.timeline.append((at, self.limit))

    def cancel(self, ticket: "Ticket") -> None:
        """A slot handed to a request that was cancelled before it was sent."""
        self._on_wire()
        self.inflight.discard(ticket.seq)

    def summary(self) -> dict:
        """What config.json records: the limit over time and the level it held longest (sustained), and what was in
        flight: at most, and on average while requests were out."""
        elapsed = max(self.clock() - self.started, 1e-9)
        return {"endpoint": self.name, "sustained": sustained(self.timeline, elapsed), "final": self.limit,
                "peak": self.highest, "in_flight_max": self.most_inflight,
                "in_flight_mean": round(self._inflight_s / max(self._since - self.started, 1e-9), 1),
                "requests": self.sent, "answered": self.answered,
                "overloaded": self.overloads, "answers_per_s": round(self.answered / elapsed, 2),
                "timeline": self.timeline[:200]}


@dataclass(frozen=True)
class Ticket:
    """One request's slot on a lane: released once, with what the request came to."""

    lane: Lane
    seq: int
    epoch: int

    @property
    def endpoint(self) -> int:
        return self.lane.index


def sustained(timeline: list[tuple[float, int]], elapsed: float) -> int:
    """The level held longest in total: what the server took, not a probe's peak."""
    held: dict[int, float] = collections.defaultdict(float)
    for (t, level), (t_next, _) in zip(timeline, timeline[1:] + [(elapsed, 0)]):
        held[level] += max(0.0, t_next - t)
    return max(held, key=lambda level: (held[level], level))
