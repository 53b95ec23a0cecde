"""Shared fixtures: the full open pack is built once per test session (it is deterministic)."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def open_pack(tmp_path_factory) -> Path:
    """The full open AcousticBench pack (3,800 questions), built once; tests must not modify it."""
    prebuilt = os.environ.get("ACOUSTICBENCH_TEST_ARCHIVE")
    if prebuilt:
        return Path(prebuilt)
    from acousticbench.archive.build import build_open_pack

    root = tmp_path_factory.mktemp("open_pack") / "archive"
    build_open_pack(root)
    return root


def write_tiny_pack(root: Path, task: str = "rad", n_scored: int = 8) -> Path:
    """A small valid pack of noise clips: n_scored scored questions (levels 1..n, A/B alternating,
    train/eval alternating) plus one catch, one identical pair and one swap twin of question 1."""
    import numpy as np

    from acousticbench.archive.pack import write_manifest, write_questions
    from acousticbench.audio import write_wav
    from acousticbench.records import Question
    from acousticbench.tasks import TASKS

    (root / task / "audio").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    questions = []

    def clip(i: int, k: int) -> tuple[str, str]:
        rel = f"{task}/audio/{task}_{i:04d}_{k}.wav"
        write_wav(root / rel, 0.1 * rng.standard_normal(1600))
        return rel, hashlib.sha256((root / rel).read_bytes()).hexdigest()

    def add(i: int, answer, probe=None, twin_of=None, audio=None, kind="scored"):
        files = audio or [clip(i, 1), clip(i, 2)]
        questions.append(Question(
            id=f"{task}_{i:04d}", task=task, split="train" if i % 2 else "eval", kind=kind,
            prompt=TASKS[task].prompt(), audio=[f for f, _ in files], answer=answer,
            meta={"attribute": TASKS[task].attribute, "level": None if probe else 1 + (i - 1) % 5,
                  "probe": probe, "twin_of": twin_of},
            sha256=dict(files),
        ).sealed())
        return files

    first = None
    for i in range(1, n_scored + 1):
        files = add(i, "A" if i % 2 else "B")
        first = first or files
    add(n_scored + 1, "A", probe="catch", kind="diagnostic")
    add(n_scored + 2, None, probe="identical", kind="diagnostic")
    add(n_scored + 3, "B", probe="swap", twin_of=f"{task}_0001", audio=first[::-1], kind="diagnostic")
    digest = write_questions(root, task, questions)
    write_manifest(root, "tiny-test-pack", "0", {task: {"title": TASKS[task].title, "clips": 2, "n_scored": n_scored,
                                                       "n_diagnostic": 3}}, {f"{task}/questions.jsonl": digest})
    return root


@pytest.fixture
def tiny_pack(tmp_path) -> Path:
    return write_tiny_pack(tmp_path / "archive")
