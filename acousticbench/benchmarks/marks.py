"""The mark (†) on a leaderboard cell whose runs the model could not hear as sent: metrics.json's `listener` note (a
mono listener on a stereo task, or the canary's finding that the audio does not reach the model), drawn the same way
by every benchmark's Markdown, CSV and report."""
from __future__ import annotations

from collections.abc import Iterable
from html import escape

from acousticbench.benchmarks.entry import Entry

MARK = "†"


def note_of(runs: Iterable[Entry]) -> str | None:
    """What the model could not hear in these runs (pooled into one cell): their notes, or None where none has one."""
    notes = sorted({e.listener for e in runs if e.listener})
    return "; ".join(notes) or None


def marked(text: str, note: str | None) -> str:
    """A Markdown cell with the mark where its runs carry a note."""
    return f"{text} {MARK}" if note else text


def footnotes(notes: Iterable[str | None], consequence: str = "") -> str:
    """The Markdown lines under a table naming each note its marks stand for ('† <note>: <consequence>.')."""
    said = f": {consequence}" if consequence else ""
    return "".join(f"\n{MARK} {note}{said}.\n" for note in sorted({n for n in notes if n}))


def html_mark(note: str | None, consequence: str = "") -> str:
    """The report's mark in a cell: the note itself, its consequence on hover; '' where there is none."""
    if not note:
        return ""
    title = f"{note}: {consequence}" if consequence else note
    return f' <b class="mono" data-mark="listener" title="{escape(title)}">{MARK} {escape(note)}</b>'
