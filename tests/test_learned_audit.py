"""The learned shortcut audit: a random forest over generic features finds a cue planted in a small pack and names it,
leaves out only what a task declares its attribute, and holds the rivals declared "alone only" to the bound alone."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from acousticbench.benchmarks.acoustic.pack import write_manifest, write_questions
from acousticbench.benchmarks.acoustic.records import Question
from acousticbench.benchmarks.acoustic.shortcuts.learned import learned_audit
from acousticbench.benchmarks.acoustic.shortcuts.learned_measures import ALONE_ONLY, ATTRIBUTE_FEATURES
from acousticbench.benchmarks.acoustic.shortcuts.learned_rows import Table, question_row
from acousticbench.benchmarks.acoustic.tasks import TASKS
from acousticbench.core.audio import SAMPLE_RATE, write_wav
from harness_cli import script

pytest.importorskip("sklearn", reason='the learned audit is the `audit` extra: pip install -e ".[audit]"')

TIME_FAMILIES = ("timing.", "event.", "decay.", "env.", "level.", "mod.")  # a burst's length shows in each of these


def burst(rng: np.random.Generator, length_s: float) -> np.ndarray:
    """A noise burst of `length_s` at a roved onset and level in 0.6 s of quiet noise."""
    x = 1e-4 * rng.standard_normal(int(0.6 * SAMPLE_RATE))
    start, n = int(rng.uniform(0.02, 0.1) * SAMPLE_RATE), int(length_s * SAMPLE_RATE)
    ramp = np.minimum(1.0, np.minimum(np.arange(n), np.arange(n)[::-1]) / 80)
    x[start : start + n] += 10 ** (rng.uniform(-30, -10) / 20) * rng.standard_normal(n) * ramp
    return x


def planted_pack(root: Path, task: str, n_scored: int = 80) -> Path:
    """A pitch pack whose answer nothing but the burst lengths gives away: A when clip 1's burst is the longer."""
    rng = np.random.default_rng(35)
    (root / task / "audio").mkdir(parents=True)
    questions = []
    for i in range(1, n_scored + 1):
        answer = "AB"[(i // 2) % 2]  # answers and splits cross: each split holds as many A as B
        short = rng.uniform(0.12, 0.22)
        lengths = (2 * short, short) if answer == "A" else (short, 2 * short)
        files = []
        for k, length in enumerate(lengths, 1):
            rel = f"{task}/audio/{task}_{i:04d}_{k}.wav"
            write_wav(root / rel, burst(rng, length))
            files.append((rel, hashlib.sha256((root / rel).read_bytes()).hexdigest()))
        questions.append(Question(
            id=f"{task}_{i:04d}", task=task, split="train" if i % 2 else "eval", kind="scored",
            prompt=TASKS[task].prompt(), audio=[f for f, _ in files], answer=answer, sha256=dict(files),
            meta={"attribute": TASKS[task].attribute, "level": 1, "probe": None, "twin_of": None}).sealed())
    digest = write_questions(root, task, questions)
    write_manifest(root, "planted", "0", {task: {"title": TASKS[task].title, "clips": 2, "n_scored": n_scored,
                                                 "n_diagnostic": 0}}, {f"{task}/questions.jsonl": digest})
    return root


@pytest.mark.slow  # 240 clips' features and a forest in a subprocess: 20-130 s on two busy cores
def test_a_planted_length_cue_fails_the_audit_and_is_named(tmp_path):
    """Pitch questions answered by which burst is longer: the audit exits 1, and both the best lone generic feature
    and the forest's leading feature read the time course, none is one of pitch's declared features."""
    pack = planted_pack(tmp_path / "archive", "pit")
    out = script("bench/shortcut_audit.py", "--archive", str(pack), "--task", "pit", timeout=600)
    assert out.returncode == 1, out.stdout + out.stderr
    lone = next(line for line in out.stdout.splitlines() if "generic feature" in line and "SHORTCUT pit" in line)
    forest = next(line for line in out.stdout.splitlines() if "the learner" in line and "SHORTCUT pit" in line)
    assert lone.split("generic feature ")[1].split()[0].startswith(TIME_FAMILIES), lone
    leaning = forest.split("leaning most on ")[1].split(", ")
    assert leaning[0].startswith(TIME_FAMILIES), forest
    assert not any(name.startswith(("harm.", "contrast.")) for name in leaning)  # pitch's own: never in the fit


def rows(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n questions of three generic features: "x.answer" (clip 1 minus clip 2) gives the answer, the rest is noise."""
    is_a = np.arange(n) % 2 == 0
    answer = np.where(is_a, 1.0, -1.0) * rng.uniform(0.5, 2.0, n)
    return np.column_stack([answer, rng.standard_normal((n, 3))]), is_a


COLUMNS = ("d:x.answer", "d:x.noise", "m:x.answer", "m:x.noise")


def table(seed: int = 1, n: int = 200) -> Table:
    x, is_a = rows(np.random.default_rng(seed), n)
    return Table(COLUMNS, x, is_a, np.arange(n) < n // 2)


def test_a_feature_that_answers_is_caught_alone_and_by_the_forest():
    audit = learned_audit("tst", table(), {}, {})
    assert audit.accuracy >= 0.95 and audit.best_lone.feature == "x.answer" and audit.best_lone.accuracy >= 0.95
    assert audit.importance[0][0] == "x.answer" and not audit.passes(0.60)


def test_a_declared_attribute_is_left_out_of_both():
    audit = learned_audit("tst", table(), {"x.answer": "the attribute"}, {})
    assert [f.feature for f in audit.lone] == ["x.noise"] and audit.n_features == 1
    assert audit.accuracy <= 0.60 and audit.passes(0.60)


def test_a_rival_declared_alone_only_is_bounded_alone_but_not_fitted():
    audit = learned_audit("tst", table(), {}, {"x.answer": "with another feature, the attribute"})
    assert audit.best_lone.feature == "x.answer" and audit.best_lone.why and not audit.passes(0.60)
    assert audit.n_features == 1 and audit.accuracy <= 0.60


@pytest.mark.slow  # two forests more: the inner loop's other forests are seeded the same way
def test_the_same_table_gives_the_same_figures():
    first, second = learned_audit("tst", table(seed=4), {}, {}), learned_audit("tst", table(seed=4), {}, {})
    assert first == second


def test_swapping_the_clips_negates_differences_and_keeps_means():
    rng = np.random.default_rng(2)
    a, b = burst(rng, 0.3), burst(rng, 0.15)
    forward, backward = question_row([a, b], SAMPLE_RATE), question_row([b, a], SAMPLE_RATE)
    assert forward.keys() == backward.keys()
    for name, value in forward.items():
        assert backward[name] == pytest.approx(-value if name.startswith("d:") else value, abs=1e-9), name
    assert forward["d:timing.span_s"] == pytest.approx(0.15, abs=0.011)


@pytest.mark.parametrize("task", list(TASKS))
def test_every_declaration_names_features_that_exist(task):
    """A pattern that matches no generic feature is a typo that would leave the attribute in the fit."""
    from fnmatch import fnmatchcase

    rng = np.random.default_rng(0)
    clips = [np.column_stack([burst(rng, 0.2), burst(rng, 0.2)])] if TASKS[task].clips == 1 else [burst(rng, 0.2)] * 2
    columns = list(question_row(clips, SAMPLE_RATE))
    for pattern in {**ATTRIBUTE_FEATURES.get(task, {}), **ALONE_ONLY.get(task, {})}:
        assert any(fnmatchcase(c, pattern) or fnmatchcase(c.split(":", 1)[1], pattern) for c in columns), pattern
