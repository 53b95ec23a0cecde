"""Shortcut audit of the open pack: no cheap feature (level, spectrum, timing, noise floor, clip order) answers a task
unless it is the attribute's own measure, alone or jointly, and the pack's layout is balanced."""
from __future__ import annotations

import contextlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from acousticbench.benchmarks.acoustic.pack import load_questions
from acousticbench.core.audio import read_audio
from acousticbench.benchmarks.acoustic.records import Question
from acousticbench.benchmarks.acoustic.shortcuts.audit import BOUND, COLUMNS, TaskAudit, audit_pack, audit_task, offenders, question_row
from acousticbench.benchmarks.acoustic.shortcuts.features import FEATURES, LEVEL, PAIRS, clip_features
from acousticbench.benchmarks.acoustic.shortcuts.joint import joint_accuracy
from acousticbench.benchmarks.acoustic.stimuli.sources import render_burst, roved_event
from acousticbench.benchmarks.acoustic.tasks import TASKS
from harness_cli import script

CODES = list(TASKS)


@pytest.fixture(scope="module")
def packs(open_pack: Path) -> dict[str, list[Question]]:
    return {code: load_questions(open_pack, code) for code in CODES}


@pytest.fixture(scope="module")
def audits(open_pack: Path) -> dict[str, TaskAudit]:
    return {a.task: a for a in audit_pack(open_pack)}


@pytest.mark.slow
@pytest.mark.parametrize("code", CODES)
def test_no_cue_but_the_attributes_own_answers_alone_or_jointly(code, audits):
    """Every cheap cue alone, and all non-attribute cues in one logistic fit, stay near chance on eval."""
    mine = audits[code]
    assert [f.feature for f in mine.findings] == list(COLUMNS)
    assert mine.passes(), offenders([mine])


@pytest.mark.slow
def test_audit_finds_the_cues_that_do_carry_the_answer(audits):
    """The same rules find level in loudness pairs and the sounding span in duration pairs, or the audit proves nothing."""
    found = {(a.task, f.feature): f.accuracy for a in audits.values() for f in a.findings}
    assert found["lou", "rms_db"] == 1.0 and found["dur", "span_s"] >= 0.95 and found["bri", "centroid_hz"] >= 0.95
    assert found["cnt", "onset_count"] >= 0.95  # the attribute's own measure is scored and printed, not hidden


def test_audit_flags_the_leak_of_equal_overall_rms():
    """Counting pairs of fixed 50 ms bursts scaled to one overall RMS (the pack before roving): softer events answer
    "more events", and the duty cycle answers it too."""
    rng = np.random.default_rng(5)
    rows, is_a = [], []
    for i in range(120):
        params = roved_event(rng)
        counts = ((4, 2), (2, 4), (6, 3), (3, 6))[i % 4]
        clips = []
        for count in counts:
            x = 1e-4 * rng.standard_normal(24000)
            for t in np.sort(rng.choice(np.arange(0.05, 1.3, 0.11), count, replace=False)):
                x[int(t * 16000) : int(t * 16000) + 800] += render_burst(params, 800, rng)
            clips.append(0.05 * x / np.sqrt(np.mean(x**2)))
        rows.append(question_row(clips, 16000))
        is_a.append(counts[0] > counts[1])
    rows, is_a = np.array(rows), np.array(is_a)
    train = np.arange(120) % 4 < 2  # train: (4, 2) and (2, 4); eval: (6, 3) and (3, 6); both halves A/B balanced
    result = audit_task("cnt", (rows[train], is_a[train]), (rows[~train], is_a[~train]))
    found = {f.feature: f.accuracy for f in result.findings}
    assert found["peak_db"] >= 0.95 and found["silent_fraction"] >= 0.95 and result.joint >= 0.95 and not result.passes()


def test_joint_fit_finds_a_difference_that_cancels_a_rove():
    """Two cues under one wide rove, neither answering alone: their difference answers, and the logistic fit finds it."""
    rng = np.random.default_rng(3)
    answer = rng.random(400) < 0.5
    rove = rng.uniform(-15, 15, 400)
    x = np.column_stack([rove + np.where(answer, 1.0, -1.0), rove, rng.standard_normal(400)])
    single = audit_task("pit", (np.zeros((200, len(COLUMNS))), answer[:200]), (np.zeros((200, len(COLUMNS))), answer[200:]))
    assert single.joint == 0.5  # no usable column: chance, never a fit on constants
    assert joint_accuracy((x[:200], answer[:200]), (x[200:], answer[200:]))[0] >= 0.95


def test_a_gain_moves_only_the_level_features():
    x = np.zeros(16000)
    x[2000:9000] = np.sin(2 * np.pi * 440 * np.arange(7000) / 16000) + 1e-4 * np.random.default_rng(1).standard_normal(7000)
    x += 1e-5 * np.random.default_rng(2).standard_normal(16000)
    (quiet,), (loud,) = clip_features(0.1 * x, 16000), clip_features(0.4 * x, 16000)
    for name in (*FEATURES, *PAIRS):
        moved = 20 * np.log10(4) if name in LEVEL or name == "floor_db" else 0.0
        assert loud[name] - quiet[name] == pytest.approx(moved, abs=1e-6), name
    assert quiet["onset_s"] == pytest.approx(0.125, abs=0.006) and quiet["span_s"] == pytest.approx(7000 / 16000, abs=0.006)
    assert quiet["onset_count"] == 1


def test_the_spectrum_is_scipys_welch():
    """The audit's spectral cues read the same Welch spectrum scipy computes, for clips of every length."""
    from scipy import signal

    from acousticbench.benchmarks.acoustic.shortcuts.features import welch

    rng = np.random.default_rng(3)
    for length in (16000, 12345, 24001, 513, 300):
        x = rng.standard_normal(length) * np.linspace(0.1, 1.0, length) + 0.01
        with np.errstate(all="ignore"), pytest.warns(UserWarning) if length < 512 else contextlib.nullcontext():
            freqs, psd = signal.welch(x, fs=16000, nperseg=512)
        ours = welch(x, 16000)
        assert np.allclose(ours[0], freqs) and np.allclose(ours[1], psd, rtol=1e-10, atol=0), length


@pytest.mark.slow
def test_audit_command_prints_the_table(open_pack):
    out = script("bench/shortcut_audit.py", "--archive", str(open_pack), "--task", "lou,pit", "--no-learner", timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[0].split()[:2] == ["task", "best"]
    assert "lou: peak_db" in out.stdout and f"0 shortcut(s) above {BOUND:.2f}." in out.stdout


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
