"""Times as instants: what the harness writes (UTC, with its offset) and how it orders runs by them, never by the text
of a local time (two runs made under different time zones sort wrongly as text)."""
from __future__ import annotations

import time
from datetime import datetime, timezone


def now() -> str:
    """This instant in UTC, to the millisecond, with its offset: '2026-12-03T09:24:24.123+00:00'."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def instant(text: object) -> float | None:
    """Seconds since the epoch of a time the harness wrote (any offset: older harnesses wrote local time with its
    offset, '+0100'); None for anything else."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


def stamp_instant(stamp: str) -> float | None:
    """A run folder's name stamp '20261203-092424' as an instant: the local time of the machine that reads it (what
    folder names hold), used only for a folder whose config.json gives no time."""
    try:
        return time.mktime(time.strptime(stamp, "%Y%m%d-%H%M%S"))
    except (ValueError, OverflowError):
        return None
