"""Shortcut audit of the open pack: what must not carry the answer (file size, length, level, clip order) stays at chance."""
from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from acousticbench.archive.pack import load_questions
from acousticbench.audio import read_audio
from acousticbench.records import Question
from acousticbench.tasks import TASKS

CODES = list(TASKS)


@pytest.fixture(scope="module")
def packs(open_pack: Path) -> dict[str, list[Question]]:
    return {code: load_questions(open_pack, code) for code in CODES}


def clip_features(path: Path, with_level: bool) -> list[float]:
    """What a lazy classifier could read off one file without listening to the attribute."""
    info = sf.info(str(path))
    features = [float(path.stat().st_size), info.frames / info.samplerate]
    if with_level:
        samples = read_audio(path)[0].astype(np.float64)
        features.append(10 * np.log10(np.mean(samples**2) + 1e-20))
    return features


def question_features(root: Path, question: Question) -> list[float]:
    """Each clip's features and, for pairs, their differences (clip 1 minus clip 2)."""
    per_clip = [clip_features(root / rel, with_level=question.task != "lou") for rel in question.audio]
    features = [value for clip in per_clip for value in clip]
    if len(per_clip) == 2:
        features += [a - b for a, b in zip(*per_clip)]
    return features


def fit_threshold(values: np.ndarray, is_a: np.ndarray) -> tuple[float, int, float]:
    """The best rule "A if polarity * (value - threshold) > 0" on these data: (threshold, polarity, accuracy)."""
    order = np.argsort(values, kind="stable")
    v, y = values[order], is_a[order].astype(int)
    a_below = np.concatenate(([0], np.cumsum(y)))  # A answers among the i smallest values
    i = np.arange(v.size + 1)
    splits = np.concatenate(([True], v[1:] > v[:-1], [True]))  # a threshold cannot separate equal values
    up = (i - a_below) + (y.sum() - a_below)  # predict A above the split
    candidates = []
    for polarity, correct in ((1, up), (-1, v.size - up)):
        k = int(np.argmax(np.where(splits, correct, -1)))
        threshold = -np.inf if k == 0 else np.inf if k == v.size else 0.5 * (v[k - 1] + v[k])
        candidates.append((threshold, polarity, correct[k] / v.size))
    return max(candidates, key=lambda c: c[2])


def chance_interval(n: int, confidence: float = 0.99) -> tuple[float, float]:
    """Central binomial(n, 0.5) interval of accuracies a guesser reaches with this confidence."""
    cdf, k_low, k_high = 0.0, None, None
    for k in range(n + 1):
        cdf += math.comb(n, k) / 2**n
        if k_low is None and cdf > (1 - confidence) / 2:
            k_low = k
        if k_high is None and cdf >= 1 - (1 - confidence) / 2:
            k_high = k
    return k_low / n, k_high / n


@pytest.mark.parametrize("code", CODES)
def test_best_single_feature_rule_stays_at_chance(code, packs, open_pack):
    scored = [q for q in packs[code] if q.kind == "scored"]
    halves = {}
    for split in ("train", "eval"):
        rows = [q for q in scored if q.split == split]
        halves[split] = (np.array([question_features(open_pack, q) for q in rows]), np.array([q.answer == "A" for q in rows]))
    (train_x, train_y), (eval_x, eval_y) = halves["train"], halves["eval"]
    fits = [fit_threshold(train_x[:, j], train_y) for j in range(train_x.shape[1])]
    j = max(range(len(fits)), key=lambda f: fits[f][2])  # the audit picks its feature on train only
    threshold, polarity, _ = fits[j]
    predicted_a = polarity * (eval_x[:, j] - threshold) > 0  # an infinite threshold is a constant guess
    accuracy = float(np.mean(predicted_a == eval_y))
    low, high = chance_interval(eval_y.size)
    assert low <= accuracy <= high, f"{code}: feature {j} predicts the answer ({accuracy:.3f} on eval)"


@pytest.mark.parametrize("code", CODES)
def test_always_first_is_exactly_chance(code, packs):
    scored = [q for q in packs[code] if q.kind == "scored"]
    for split in ("train", "eval"):
        answers = [q.answer for q in scored if q.split == split]
        assert answers.count("A") == answers.count("B") == 100


@pytest.mark.parametrize("code", CODES)
def test_counts_are_balanced(code, packs):
    questions = packs[code]
    assert [q.id for q in questions] == [f"{code}_{n:04d}" for n in range(1, 476)]
    scored = [q for q in questions if q.kind == "scored"]
    cells = Counter((q.meta["level"], q.split, q.answer) for q in scored)
    assert len(scored) == 400 and set(cells.values()) == {20} and len(cells) == 20
    probes = Counter(q.meta["probe"] for q in questions if q.kind == "diagnostic")
    assert probes == {"catch": 25, "identical": 25, "swap": 25}
    catch = Counter(q.answer for q in questions if q.meta["probe"] == "catch")
    assert sorted(catch.values()) == [12, 13]
    assert all(q.answer is None for q in questions if q.meta["probe"] == "identical")
    swaps = Counter(q.answer for q in questions if q.meta["probe"] == "swap")
    assert sorted(swaps.values()) == [12, 13]
    diagnostic_splits = Counter(q.split for q in questions if q.kind == "diagnostic")
    assert abs(diagnostic_splits["train"] - diagnostic_splits["eval"]) <= 3


@pytest.mark.parametrize("code", CODES)
def test_first_40_ids_cover_every_level_split_and_answer(code, packs):
    first = packs[code][:40]
    cells = Counter((q.meta["level"], q.split, q.answer) for q in first)
    assert all(q.kind == "scored" for q in first) and len(cells) == 20 and set(cells.values()) == {2}


@pytest.mark.parametrize("code", CODES)
def test_every_file_of_a_task_has_the_same_length(code, packs, open_pack):
    paths = {rel for q in packs[code] for rel in q.audio}
    infos = [sf.info(str(open_pack / rel)) for rel in sorted(paths)]
    assert len({(info.frames, info.samplerate, info.channels) for info in infos}) == 1
    assert infos[0].channels == (2 if TASKS[code].clips == 1 else 1) and infos[0].samplerate == 16000


@pytest.mark.parametrize("code", CODES)
def test_swap_twins_reverse_their_original(code, packs, open_pack):
    by_id = {q.id: q for q in packs[code]}
    for twin in (q for q in packs[code] if q.meta["probe"] == "swap"):
        original = by_id[twin.meta["twin_of"]]
        assert original.kind == "scored" and twin.split == original.split and twin.answer != original.answer
        assert twin.meta["level"] == original.meta["level"]
        if TASKS[code].clips == 2:
            assert twin.audio == original.audio[::-1]
        else:
            mirrored = read_audio(open_pack / twin.audio[0])[0]
            np.testing.assert_array_equal(mirrored, read_audio(open_pack / original.audio[0])[0][:, ::-1])


@pytest.mark.parametrize("code", CODES)
def test_identical_pairs_are_identical(code, packs, open_pack):
    for question in (q for q in packs[code] if q.meta["probe"] == "identical"):
        if TASKS[code].clips == 2:
            assert len(set(question.sha256.values())) == 1
        else:
            stereo = read_audio(open_pack / question.audio[0])[0]
            np.testing.assert_array_equal(stereo[:, 0], stereo[:, 1])


def test_audit_catches_a_cue_that_does_carry_the_answer(packs, open_pack):
    """The same rule on loudness pairs with the level included: it must find the answer, or the audit proves nothing."""
    scored = [q for q in packs["lou"] if q.kind == "scored"]

    def level_gap(question: Question) -> float:
        one, two = (clip_features(open_pack / rel, with_level=True)[2] for rel in question.audio)
        return one - two

    train = [q for q in scored if q.split == "train"]
    threshold, polarity, _ = fit_threshold(np.array([level_gap(q) for q in train]), np.array([q.answer == "A" for q in train]))
    evaluation = [q for q in scored if q.split == "eval"]
    predicted_a = polarity * (np.array([level_gap(q) for q in evaluation]) - threshold) > 0
    assert np.mean(predicted_a == np.array([q.answer == "A" for q in evaluation])) == 1.0
