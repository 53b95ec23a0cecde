"""Where a command's lines and progress go: the command line prints them, a Python call keeps quiet unless it is given
a reporter (evaluate(..., reporter=ConsoleReporter()) prints what `acousticbench run` prints)."""
from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, TextIO, runtime_checkable


@runtime_checkable
class Reporter(Protocol):
    """What the run path tells the person watching: a result line, a note or warning, and whether to draw bars."""

    def line(self, text: str) -> None:
        """A result (a run's summary line, the closing table): stdout on the command line."""

    def warning(self, text: str) -> None:
        """A note, warning or error line ('note: ...', 'warning: ...'): stderr on the command line."""

    def progress(self) -> bool:
        """Whether to draw a progress bar per model while the sweep runs."""


class SilentReporter:
    """The default of every Python call: nothing printed, no bars; the runs and their files say everything."""

    def line(self, text: str) -> None:
        return None

    def warning(self, text: str) -> None:
        return None

    def progress(self) -> bool:
        return False


class ConsoleReporter:
    """The command line's: lines on stdout, notes on stderr, each whole and flushed (above the bars when they are
    drawn); bars where stderr is a terminal, or as `progress` says."""

    def __init__(self, progress: bool | None = None):
        self._progress = progress

    def line(self, text: str) -> None:
        _write(text, sys.stdout)

    def warning(self, text: str) -> None:
        _write(text, sys.stderr)

    def progress(self) -> bool:
        return sys.stderr.isatty() if self._progress is None else self._progress


def _write(text: str, out: TextIO) -> None:
    if "tqdm" in sys.modules:  # bars may be drawn: tqdm clears them, prints the line and redraws them
        from tqdm import tqdm

        tqdm.write(text, file=out)
    else:
        print(text, file=out)
    out.flush()


# one per process, not per context: the run path's threads (a listening page, the judge's workers) start with an
# empty context and would otherwise print what the caller asked to keep quiet
_lock = threading.Lock()
_current: Reporter = ConsoleReporter()


def current() -> Reporter:
    return _current


@contextmanager
def reporting(reporter: Reporter) -> Iterator[Reporter]:
    """Send every line of the run path to `reporter` while the block runs (then to the one before)."""
    global _current
    with _lock:
        before, _current = _current, reporter
    try:
        yield reporter
    finally:
        with _lock:
            _current = before


def say(text: str) -> None:
    """A result line, to the current reporter."""
    _current.line(text)


def warn(text: str) -> None:
    """A note or warning line, to the current reporter."""
    _current.warning(text)
