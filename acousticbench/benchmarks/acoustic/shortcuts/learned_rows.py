"""The learned audit's table of a task: one row of generic features per scored question, cached by the questions file."""
# A row holds, for every generic feature of a channel (shortcuts/generic_time.py, generic_spectrum.py), clip 1 minus
# clip 2 ("d:NAME") and their mean ("m:NAME"); the one stereo clip of `dir` gives left minus right and the mean of the
# two ears, and its interaural features. Swapping the clips (or mirroring the ears) negates every "d:" column and
# keeps every "m:" column, which is how the learner doubles its training rows (shortcuts/learned.py).

from __future__ import annotations

import hashlib
import inspect
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from acousticbench.benchmarks.acoustic.pack import load_manifest, load_questions, questions_relpath
from acousticbench.benchmarks.acoustic.shortcuts import features, generic_spectrum, generic_time
from acousticbench.benchmarks.acoustic.shortcuts.features import SOUNDING_DB, db_power, frame_power
from acousticbench.core.audio import read_audio
from acousticbench.core.environment import cache_dir

MAX_ITD_S = 0.001  # the interaural lag is searched within a head's width


@dataclass(frozen=True)
class Table:
    """A task's scored questions as feature rows: `x[i]` is question i's row of `columns`."""

    columns: tuple[str, ...]
    x: np.ndarray
    is_a: np.ndarray
    train: np.ndarray  # True where the question is in train, False in eval


def channel_features(x: np.ndarray, sr: int) -> dict[str, float]:
    """Every generic feature of one channel of float samples."""
    x = np.asarray(x, dtype=np.float64)
    power = frame_power(x, sr)
    sounding = db_power(power) >= db_power(power.max()) - SOUNDING_DB
    out = generic_time.time_features(x, power) | generic_spectrum.spectral(x, sr)
    return out | generic_spectrum.periodicity(x, sounding, sr)


def interaural(left: np.ndarray, right: np.ndarray, sr: int) -> tuple[dict[str, float], dict[str, float]]:
    """(left-minus-right, symmetric) features of a stereo clip: level difference, lag of the best cross-correlation
    (positive when the left ear leads), and that correlation."""
    n = 1 << int(np.ceil(np.log2(2 * left.size)))
    cross = np.fft.irfft(np.fft.rfft(left, n) * np.conj(np.fft.rfft(right, n)), n)
    lags = np.arange(-int(MAX_ITD_S * sr), int(MAX_ITD_S * sr) + 1)
    values = cross[lags % n]
    best = int(np.argmax(values))
    norm = np.sqrt(np.sum(left**2) * np.sum(right**2)) + 1e-30
    ild = float(db_power(np.mean(left**2)) - db_power(np.mean(right**2)))
    return {"d:ear.ild_db": ild, "d:ear.itd_s": float(-lags[best] / sr)}, {"m:ear.coherence": float(values[best] / norm)}


def question_row(clips: list[np.ndarray], sr: int) -> dict[str, float]:
    """"d:" and "m:" of every generic feature for a pair of mono clips or one stereo clip (and its interaural ones)."""
    channels = [c for clip in clips for c in (clip.T if clip.ndim == 2 else clip[None])]
    first, second = (channel_features(c, sr) for c in channels[:2])
    row = {f"d:{k}": first[k] - second[k] for k in first} | {f"m:{k}": 0.5 * (first[k] + second[k]) for k in first}
    if len(clips) == 1:
        difference, mean = interaural(np.asarray(channels[0], float), np.asarray(channels[1], float), sr)
        row |= difference | mean
    return row


def feature_version() -> str:
    """A digest of the code that computes a row: a cached table is read only by the code that wrote it."""
    digest = hashlib.sha256()
    for module in (generic_time, generic_spectrum, features):
        digest.update(Path(module.__file__).read_bytes())
    for function in (channel_features, interaural, question_row):
        digest.update(inspect.getsource(function).encode())
    return digest.hexdigest()[:16]


def compute(root: Path, task: str) -> Table:
    rows, is_a, train = [], [], []
    for question in load_questions(root, task):
        if question.kind == "scored" and question.split in ("train", "eval"):
            clips = [read_audio(root / rel) for rel in question.audio]
            rows.append(question_row([samples for samples, _ in clips], clips[0][1]))
            is_a.append(question.answer == "A")
            train.append(question.split == "train")
    columns = tuple(rows[0]) if rows else ()
    x = np.array([[row[c] for c in columns] for row in rows]).reshape(len(rows), len(columns))
    return Table(columns, x, np.array(is_a, dtype=bool), np.array(train, dtype=bool))


def task_table(root: Path, task: str) -> Table:
    """The task's table, read from the cache when the same questions file (so the same audio) was read before."""
    digest = load_manifest(root).get("sha256", {}).get(questions_relpath(task))
    path = cache_dir() / "shortcut-audit" / f"{task}-{digest}-{feature_version()}.npz"
    if digest and path.is_file():
        with np.load(path) as saved:
            return Table(tuple(saved["columns"].tolist()), saved["x"], saved["is_a"], saved["train"])
    table = compute(root, task)
    if digest:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.stem}.{os.getpid()}.npz")  # written whole, then renamed: no reader sees half
        np.savez(partial, columns=np.array(table.columns), x=table.x, is_a=table.is_a, train=table.train)
        os.replace(partial, path)
    return table


def task_tables(root: Path, tasks: list[str], workers: int) -> list[Table]:
    """Every task's table, the uncached ones computed a task per worker process (one task: in this process)."""
    from functools import partial

    from acousticbench.packs.workers import map_in_processes

    if workers <= 1 or len(tasks) <= 1:
        return [task_table(root, task) for task in tasks]
    return map_in_processes(partial(task_table, root), tasks, min(workers, len(tasks)))
