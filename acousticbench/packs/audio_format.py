"""Whether a pack's WAV clip is what the pack promises (sample rate, sample format, channels, whole and finite
samples), read from its header without decoding it; shared by the pre-run check and --verify-checksums."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from acousticbench.packs.files import BATCH, WORKERS

HEAD_BYTES = 4096  # the RIFF chunks before 'data' (fmt, LIST, fact) fit in far less
_FORMATS = {(1, 8): "PCM_U8", (1, 16): "PCM_16", (1, 24): "PCM_24", (1, 32): "PCM_32", (3, 32): "FLOAT",
            (3, 64): "DOUBLE"}
SAMPLE_FORMATS = tuple(_FORMATS.values())
_FLOAT_DTYPES = {"FLOAT": "<f4", "DOUBLE": "<f8"}


@dataclass(frozen=True)
class ClipFormat:
    """What every clip of a pack (or of one of its tasks) must be."""

    sample_rate: int
    sample_format: str  # one of SAMPLE_FORMATS, soundfile's names
    channels: int

    def describe(self) -> str:
        layout = {1: "mono", 2: "stereo"}.get(self.channels, f"{self.channels} channels")
        return f"{self.sample_rate} Hz {self.sample_format} {layout}"


@dataclass(frozen=True)
class _Header:
    tag: int
    channels: int
    rate: int
    block_align: int
    bits: int
    data_offset: int
    data_size: int


def _header(head: bytes) -> _Header | None:
    """The 'fmt ' fields and where 'data' starts; None when `head` is no RIFF/WAVE with both chunks."""
    if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        return None
    pos, fmt = 12, None
    while pos + 8 <= len(head):
        chunk, size = head[pos : pos + 4], int.from_bytes(head[pos + 4 : pos + 8], "little")
        body = head[pos + 8 : pos + 8 + size]
        if chunk == b"fmt " and len(body) >= 16:
            tag = int.from_bytes(body[0:2], "little")
            if tag == 0xFFFE and len(body) >= 26:  # WAVE_FORMAT_EXTENSIBLE: the real tag opens the subformat GUID
                tag = int.from_bytes(body[24:26], "little")
            fmt = (tag, *(int.from_bytes(body[a:b], "little") for a, b in ((2, 4), (4, 8), (12, 14), (14, 16))))
        elif chunk == b"data":
            return _Header(*fmt, data_offset=pos + 8, data_size=size) if fmt else None
        pos += 8 + size + (size & 1)  # RIFF chunks are padded to an even size
    return None


def clip_problem(path: str, promised: ClipFormat) -> str | None:
    """Why the WAV at `path` is not a clip of `promised`, or None; a missing file is the checksum check's to name."""
    try:
        with open(path, "rb") as fh:
            head, size = fh.read(HEAD_BYTES), os.fstat(fh.fileno()).st_size
    except OSError:
        return None
    h = _header(head)
    if h is None:
        return "is not a WAV file (no RIFF/WAVE header with 'fmt ' and 'data')"
    found = ClipFormat(h.rate, _FORMATS.get((h.tag, h.bits), f"format {h.tag}/{h.bits}-bit"), h.channels)
    announced = size - h.data_offset if h.data_size in (0, 0xFFFFFFFF) else h.data_size  # written to a pipe
    if announced <= 0 or h.block_align <= 0:
        return "holds no samples"
    if h.data_offset + announced > size:
        return f"is cut short (its header announces {announced} bytes of samples, the file holds {size - h.data_offset})"
    if announced % h.block_align:
        return f"ends in a partial frame ({announced} bytes of samples, frames of {h.block_align})"
    if found.sample_format in _FLOAT_DTYPES and not _finite(path, h, found.sample_format, announced):
        return "holds NaN or infinite samples"
    if found != promised:
        return f"is {found.describe()}, the pack promises {promised.describe()}"
    return None


def _finite(path: str, h: _Header, sample_format: str, n_bytes: int) -> bool:
    import numpy as np

    samples = np.fromfile(path, dtype=_FLOAT_DTYPES[sample_format], count=n_bytes // (h.bits // 8),
                          offset=h.data_offset)
    return bool(np.isfinite(samples).all())


def clip_problems(paths: dict[str, ClipFormat]) -> dict[str, str]:
    """path -> why it is not what it must be, for every clip that is not; over a few threads like the hashing."""
    items = list(paths.items())
    batches = [items[i : i + BATCH] for i in range(0, len(items), BATCH)]
    with ThreadPoolExecutor(WORKERS) as pool:
        found = pool.map(lambda batch: [(p, clip_problem(p, f)) for p, f in batch], batches)
        return {path: problem for batch in found for path, problem in batch if problem}
