"""Where a backend's (or the judge's) answers really came from when a server redirects requests to another origin,
noticed on every request through the hooks of the HTTP client an SDK is given (an httpx event hook, an aiohttp trace
config): one line on stderr per new origin, the origins for config.json, a note for the record of each answer."""
from __future__ import annotations

import contextlib
import contextvars
import urllib.parse
from collections.abc import Iterator
from typing import Any

from acousticbench.models.chat_wire import public_url
from acousticbench.core.reporter import warn

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: Any) -> str:
    """'https://host:443/v1/x' -> 'https://host': scheme, host and port, without credentials or path."""
    parts = urllib.parse.urlsplit(str(url))
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    port = parts.port if parts.port not in (None, _DEFAULT_PORTS.get(scheme)) else None
    return f"{scheme}://{host}" + (f":{port}" if port else "")


def moved_root(asked: str, final: str, path: str) -> str:
    """The root a redirect moved a server to: the final URL without the path asked for (or its origin)."""
    return final[: -len(path)] if final.endswith(path) else origin_of(final)


def say_moved(name: str, asked: str, now: str) -> None:
    """One line when a server sends its requests to another origin: what config.json and the records name."""
    warn(f"note: {public_url(asked)} redirects {name}'s requests to {public_url(now)}; the answers come from there, "
         "and config.json and every record say so.")


def redirect_note(asked: str, now: str) -> str:
    """A record's note when its answer came from another origin than the endpoint asked."""
    return f"answered by {public_url(now)}: {public_url(asked)} redirected the request there"


class Origins:
    """One endpoint a client was pointed at, and every other origin that answered its requests. `records`: whether
    each answer's record carries a note (a model's answers) or only config.json says so (the judge's verdicts)."""

    def __init__(self, name: str, asked: str, *, records: bool = True):
        self.name, self.asked, self.records = name, asked, records
        self.answered_from: set[str] = set()
        self.redirected: dict[str, str] = {}  # at open: the endpoint given -> where its server sends every request
        self._opening = False
        # the final URL of the last answer this task received: the hooks run in the task that sent the request
        self._last: contextvars.ContextVar[str | None] = contextvars.ContextVar("answered_at", default=None)

    def saw(self, final: Any) -> str | None:
        """An answer came from `final` (its URL after redirects): from another origin it is said once, kept for
        config.json, and its record's note returned."""
        self._last.set(str(final))
        here = origin_of(final)
        if self._opening or here == origin_of(self.asked):
            return None
        if here not in self.answered_from:
            self.answered_from.add(here)
            where = "its records and config.json's answered_from say so" if self.records else \
                "config.json's answered_from says so"
            warn(f"note: {public_url(self.asked)} redirected {self.name}'s requests to {here}; answers came from "
                 f"there, and {where}.")
        return redirect_note(self.asked, here)

    def note(self) -> str | None:
        """The record's note for the answer this task received last, when another origin sent it."""
        final = self._last.get()
        here = None if final is None else origin_of(final)
        return None if here is None or here == origin_of(self.asked) else redirect_note(self.asked, here)

    def last_url(self) -> str | None:
        return self._last.get()

    @contextlib.contextmanager
    def opening(self) -> Iterator[None]:
        """While a backend opens: where its first request was answered is only noted, for `follow` to decide."""
        self._opening = True
        try:
            yield
        finally:
            self._opening = False

    def follow(self, now: str) -> bool:
        """At open, the server sent its request to `now`, another origin: every request goes there from here on."""
        if origin_of(now) == origin_of(self.asked):
            return False
        say_moved(self.name, self.asked, now)
        self.redirected[public_url(self.asked)] = public_url(now)
        self.asked = now
        return True

    async def httpx_hook(self, response: Any) -> None:
        """An httpx response event hook: it sees every hop of a request; the one that answered is the success."""
        if response.is_success:  # a redirect's hop is not; nor is an error, which answered nothing
            self.saw(response.request.url)

    def trace_config(self) -> Any:
        """An aiohttp TraceConfig whose request end sees the final URL of every request."""
        import aiohttp

        async def ended(_session: Any, _context: Any, params: Any) -> None:
            if params.response.status < 300:
                self.saw(params.response.url)

        config = aiohttp.TraceConfig()
        config.on_request_end.append(ended)
        return config


def moved_elsewhere(origins: list[Origins]) -> dict[str, Any]:
    """config.json's words for a backend's endpoints: `redirected` (followed at open: the endpoint given -> where its
    server sent every request) and `answered_from` (the other origins that answered requests later)."""
    redirected = {asked: now for o in origins for asked, now in o.redirected.items()}
    answered = sorted({here for o in origins for here in o.answered_from})
    return {**({"redirected": redirected} if redirected else {}), **({"answered_from": answered} if answered else {})}
