"""A small valid pack of noise clips with the open pack's shape, for tests and benchmarks (its answers mean nothing)."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from acousticbench.benchmarks.acoustic.pack import write_manifest, write_questions
from acousticbench.core.audio import SAMPLE_RATE, write_wav
from acousticbench.benchmarks.acoustic.records import Question
from acousticbench.benchmarks.acoustic.tasks import TASKS


def write_noise_pack(root: Path, task: str = "rad", n_scored: int = 8, clip_s: float = 0.1,
                     diagnostics: bool = True) -> Path:
    """n_scored scored two-clip questions (levels cycling 1..5, answers and splits alternating), each clip its own
    file; with `diagnostics`, also a catch trial, an identical pair and a swap twin of question 1."""
    (root / task / "audio").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    questions: list[Question] = []

    def clip(i: int, k: int) -> tuple[str, str]:
        rel = f"{task}/audio/{task}_{i:04d}_{k}.wav"
        write_wav(root / rel, 0.1 * rng.standard_normal(int(SAMPLE_RATE * clip_s)))
        return rel, hashlib.sha256((root / rel).read_bytes()).hexdigest()

    def add(i: int, answer, probe=None, twin_of=None, files=None) -> list[tuple[str, str]]:
        files = files or [clip(i, 1), clip(i, 2)]
        questions.append(Question(
            id=f"{task}_{i:04d}", task=task, split="train" if i % 2 else "eval",
            kind="diagnostic" if probe else "scored", prompt=TASKS[task].prompt(), audio=[f for f, _ in files],
            answer=answer, sha256=dict(files),
            meta={"attribute": TASKS[task].attribute, "level": None if probe else 1 + (i - 1) % 5,
                  "probe": probe, "twin_of": twin_of},
        ).sealed())
        return files

    first = [add(i, "A" if i % 2 else "B") for i in range(1, n_scored + 1)][0]
    if diagnostics:
        add(n_scored + 1, "A", probe="catch")
        add(n_scored + 2, None, probe="identical")
        add(n_scored + 3, "B", probe="swap", twin_of=f"{task}_0001", files=first[::-1])
    digest = write_questions(root, task, questions)
    n_diagnostic = len(questions) - n_scored
    write_manifest(root, "synthetic-noise-pack", "0",
                   {task: {"title": TASKS[task].title, "clips": 2, "n_scored": n_scored, "n_diagnostic": n_diagnostic}},
                   {f"{task}/questions.jsonl": digest})
    return root
