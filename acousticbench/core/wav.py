"""A WAV file's layout from its first bytes, without decoding it (and without numpy): what the harness measures clip
lengths with before a run and what our server checks requests with."""
from __future__ import annotations

import struct
from typing import NamedTuple

_U32, _FMT = struct.Struct("<I"), struct.Struct("<HI4xH")  # little-endian, as RIFF is: 7,600 headers a run


class WavLayout(NamedTuple):
    """What a WAV's RIFF chunks say up to its 'data' chunk; 0 for a 'fmt ' field that was not read."""

    channels: int
    rate: int  # frames per second
    block_align: int  # bytes per frame
    data_offset: int  # where the samples start
    data_size: int  # the bytes of samples the header announces (0 or 0xFFFFFFFF for a WAV written to a pipe)


def is_riff_wave(head: bytes) -> bool:
    return head[:4] == b"RIFF" and head[8:12] == b"WAVE"


def wav_layout(head: bytes) -> WavLayout | None:
    """The layout from a WAV's first bytes, walking its RIFF chunks ('fmt ', then 'data'); None when `head` is not a
    RIFF/WAVE or holds no 'data' chunk header."""
    if not is_riff_wave(head):
        return None
    pos, fmt = 12, (0, 0, 0)
    while pos + 8 <= len(head):
        chunk, size = head[pos : pos + 4], _U32.unpack_from(head, pos + 4)[0]
        if chunk == b"fmt " and pos + 22 <= len(head):
            fmt = _FMT.unpack_from(head, pos + 10)  # channels, rate, (byte rate), block_align
        elif chunk == b"data":
            return WavLayout(*fmt, data_offset=pos + 8, data_size=size)
        pos += 8 + size + (size & 1)  # RIFF chunks are padded to an even size
    return None
