"""AcousticBench's ideal observer: it measures the asked attribute from the waveforms; the task's ceiling (the Oracle
model, benchmarks/oracle.py, asks it for AcousticBench prompts)."""
from __future__ import annotations

import hashlib
import os
from functools import lru_cache

from acousticbench.core.audio import SAMPLE_RATE, read_audio
from acousticbench.core.errors import BackendError
from acousticbench.core.records import Prompt
from acousticbench.benchmarks.acoustic.stimuli import ATTRIBUTES
from acousticbench.benchmarks.acoustic.tasks import TASKS


def observe(prompt: Prompt) -> str:
    """Answers "A" or "B" from the audio alone: it never sees a question's answer or meta, only the Prompt.

    Two clips: "A" when the first measures more of the attribute. One stereo clip (direction): "A" when
    the sound is lateralised to the left. With no measurable difference (identical pairs) it guesses,
    evenly and reproducibly, from the question id and the seed.
    """
    module = ATTRIBUTES.get(prompt.task)
    if module is None:
        raise BackendError(f"the Oracle answers only AcousticBench tasks ({', '.join(ATTRIBUTES)}), not {prompt.task!r}.", retryable=False)
    expected = TASKS[prompt.task].clips
    if len(prompt.audio) != expected:
        raise BackendError(f"the Oracle needs the {expected} clip(s) of a {prompt.task} question unmerged, got {len(prompt.audio)}.", retryable=False)
    values = [_measured(prompt.task, path, _version(path)) for path in prompt.audio]
    difference = values[0] if len(values) == 1 else values[0] - values[1]
    if difference > 0:
        return "A"
    if difference < 0:
        return "B"
    return tie_break(prompt)


@lru_cache(maxsize=8192)  # a whole pack's clips: the seeds of a sweep measure each clip once
def _measured(task: str, path: str, version: tuple[int, int, int]) -> float:
    """The attribute of one clip, kept while the file is unchanged (its inode, size and modification time are in
    the key)."""
    return ATTRIBUTES[task].measure(read_audio(path, sr=SAMPLE_RATE)[0], SAMPLE_RATE)


def _version(path: str) -> tuple[int, int, int]:
    stat = os.stat(path)
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def tie_break(prompt: Prompt) -> str:
    """An unbiased guess that is the same on every run with the same seed."""
    digest = hashlib.sha256(f"{prompt.question_id}:{prompt.seed}".encode()).digest()
    return "AB"[digest[0] & 1]
