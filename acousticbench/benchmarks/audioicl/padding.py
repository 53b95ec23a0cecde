"""--icl-pad: every clip of a prompt padded with trailing silence to the longest one, as the public inference scripts do."""
from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import numpy as np

from acousticbench.core.audio import write_pcm16

PAD_NOTE = "clips padded with trailing silence to the longest clip of the episode (--icl-pad)"


def padded(paths: list[str], pad_dir: Path) -> list[str]:
    """Padded copies of `paths` in `pad_dir` (kept between runs: the name depends on the source and the length)."""
    import soundfile as sf

    infos = [sf.info(p) for p in paths]
    longest = max(i.frames for i in infos)
    Path(pad_dir).mkdir(parents=True, exist_ok=True)
    out = []
    for path, info in zip(paths, infos):
        if info.frames == longest:
            out.append(path)
            continue
        key = hashlib.sha256(f"{os.path.abspath(path)}:{os.path.getsize(path)}".encode()).hexdigest()[:16]
        target = Path(pad_dir) / f"{Path(path).stem}-{key}-{longest}.wav"
        if not target.is_file():
            data, rate = sf.read(path, dtype="int16", always_2d=True)
            full = np.zeros((longest, data.shape[1]), dtype=np.int16)
            full[: len(data)] = data
            tmp = target.with_name(f"{target.name}.{os.getpid()}-{threading.get_ident()}.tmp")  # a run's own
            write_pcm16(tmp, full if full.shape[1] > 1 else full[:, 0], rate)
            os.replace(tmp, target)  # atomic: a concurrent run never reads half a file
        out.append(os.path.abspath(target))
    return out
