"""Output that works on every console: a terminal, a pipe, a file, or one whose encoding cannot print every character
(PYTHONIOENCODING=ascii, a Latin-1 terminal). What it cannot print is written in plain ASCII (± as +/-), never a
traceback."""
from __future__ import annotations

import codecs
import io
import sys

HANDLER = "acousticbench-plain"
# what the tools print beyond ASCII, as it reads in ASCII
PLAIN = {"±": "+/-", "—": "-", "–": "-", "…": "...", "→": "->", "←": "<-", "×": "x", "≤": "<=", "≥": ">=", "≈": "~",
         "·": ".", "•": "*", "‘": "'", "’": "'", "“": '"', "”": '"', "✓": "ok", "✗": "x", "Δ": "delta", "µ": "u",
         "°": " deg", "²": "^2", "½": "1/2", "▕": "|", "█": "#", "▏": "|", "│": "|"}


def _plain(err: UnicodeError) -> tuple[bytes, int]:
    if not isinstance(err, UnicodeEncodeError):
        raise err
    return b"".join(_byte_form(ch) for ch in err.object[err.start:err.end]), err.end


def _byte_form(ch: str) -> bytes:
    """A byte a file name carried in from the system undecoded (surrogateescape) goes back out as it came in."""
    if "\udc80" <= ch <= "\udcff":
        return bytes([ord(ch) - 0xDC00])
    return (PLAIN.get(ch) or ch.encode("ascii", "backslashreplace").decode("ascii")).encode("ascii")


codecs.register_error(HANDLER, _plain)


def safe_output() -> None:
    """stdout and stderr write what their encoding cannot hold as plain ASCII instead of raising; a stream that
    cannot be changed (not a text file) is left as it is."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors in ("strict", "backslashreplace", "surrogateescape"):
            try:
                stream.reconfigure(errors=HANDLER)
            except (ValueError, io.UnsupportedOperation):
                continue
