"""The sha256 the pack pins for each clip a run may send, as the pre-run check found them, and the check of the bytes
actually read for sending against them: a clip replaced after the check (during a run, or behind a cached check) is
never sent as the pack's; its question becomes an error record naming the clip."""
from __future__ import annotations

import hashlib
import os

from acousticbench.core.errors import BackendError

_PINS: dict[str, str] = {}  # real path -> the sha256 the pack pins for it
CHANGED = "changed after the pack was checked"  # what an error record of such a clip says, for the run's summary


class ClipChanged(BackendError):
    """A clip's bytes are not the ones the pack pins: asking again cannot help until the pack is restored."""

    def __init__(self, message: str):
        super().__init__(message, retryable=False)


def pin(digests: dict[str, str]) -> None:
    """Clips the pre-run check found to match their pins: path -> sha256."""
    _PINS.update({os.path.realpath(path): digest for path, digest in digests.items()})


def checked(path: str, data: bytes) -> bytes:
    """`data`, read from `path` to be sent, when it is what the pack pins (or nothing pins it); else ClipChanged."""
    expected = _PINS.get(os.path.realpath(path)) if _PINS else None
    if expected is not None:
        got = hashlib.sha256(data).hexdigest()
        if got != expected:
            raise ClipChanged(f"audio file {path} {CHANGED}: its sha256 is {got[:12]}, the pack's manifest pins "
                              f"{expected[:12]}; it was not sent (restore the pack, check it with `acousticbench "
                              "pack verify`, then --resume asks this question again)")
    return data


def read_checked(path: str) -> bytes:
    """A clip's bytes as they will be sent, checked against its pin; FileNotFoundError when it is gone."""
    with open(path, "rb", buffering=0) as fh:
        return checked(path, fh.readall())
