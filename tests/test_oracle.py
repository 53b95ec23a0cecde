"""The Oracle on the open pack (the task ceiling), and the builder's promises: determinism, the pinned hash, all-or-nothing."""
from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import pytest

from acousticbench.benchmarks.acoustic.pack import build
from acousticbench.benchmarks.acoustic.pack import MANIFEST, load_questions, manifest_sha256
from acousticbench.benchmarks.acoustic.pack.pinned import OPEN_PACK_MANIFEST_SHA256
from acousticbench.core.errors import BackendError, UserError
from acousticbench.benchmarks.oracle import Oracle
from acousticbench.core.records import Prompt
from acousticbench.benchmarks.acoustic.records import Question
from acousticbench.benchmarks.acoustic.tasks import TASKS
from harness_cli import harness_env, start_cli

CODES = list(TASKS)
ORACLE = Oracle("Oracle")


def ask(root: Path, question: Question, seed: int = 42, audio: list[str] | None = None) -> str:
    paths = audio or [str(root / rel) for rel in question.audio]
    return ORACLE.respond(Prompt(benchmark="AcousticBench", question_id=question.id, task=question.task, text=question.prompt, audio=paths, seed=seed))


@pytest.fixture(scope="module")
def answers(open_pack: Path) -> dict[str, list[tuple[Question, str]]]:
    """Every question of the pack with the Oracle's answer (seed 42)."""
    return {code: [(q, ask(open_pack, q)) for q in load_questions(open_pack, code)] for code in CODES}


def accuracy(pairs: list[tuple[Question, str]]) -> float:
    return sum(chosen == q.answer for q, chosen in pairs) / len(pairs)


@pytest.mark.parametrize("code", CODES)
def test_oracle_reaches_the_ceiling_on_every_task(code, answers):
    scored = [(q, a) for q, a in answers[code] if q.kind == "scored"]
    by_level = defaultdict(list)
    for q, a in scored:
        by_level[q.meta["level"]].append((q, a))
    levels = {level: accuracy(by_level[level]) for level in range(1, 6)}
    assert accuracy(scored) >= 0.97, levels
    assert levels[1] == 1.0 and levels[1] >= levels[5], levels  # level 1 is obvious; level 5 the hardest
    catch = [(q, a) for q, a in answers[code] if q.meta["probe"] == "catch"]
    assert accuracy(catch) >= 0.99


@pytest.mark.parametrize("code", CODES)
def test_oracle_answers_follow_a_swap(code, answers):
    chosen = {q.id: a for q, a in answers[code]}
    twins = [(q, a) for q, a in answers[code] if q.meta["probe"] == "swap"]
    assert twins and all({a, chosen[q.meta["twin_of"]]} == {"A", "B"} for q, a in twins)


def test_oracle_guesses_evenly_and_reproducibly_when_there_is_no_difference(answers, open_pack):
    identical = [(q, a) for code in CODES for q, a in answers[code] if q.meta["probe"] == "identical"]
    share_a = sum(a == "A" for _, a in identical) / len(identical)
    assert 0.35 <= share_a <= 0.65  # 200 guesses: no response bias
    assert all(ask(open_pack, q) == a for q, a in identical[:10])


def test_oracle_needs_only_the_audio(answers, open_pack, tmp_path):
    """Copies of the clips under meaningless names, outside the pack, get the same answers."""
    for code in CODES:
        for question, chosen in answers[code][:3]:
            copies = []
            for k, rel in enumerate(question.audio):
                copies.append(str(shutil.copy(open_pack / rel, tmp_path / f"{code}{question.id[-4:]}{k}x.wav")))
            assert ask(open_pack, question, audio=copies) == chosen


def test_oracle_refuses_a_task_it_cannot_measure(open_pack):
    prompt = Prompt(benchmark="AudioICL", question_id="x_0001", task="AudioCount", text="?", audio=[], seed=1)
    with pytest.raises(BackendError) as err:
        ORACLE.respond(prompt)
    assert not err.value.retryable


def test_oracle_refuses_merged_or_missing_clips(answers, open_pack):
    question, _ = answers["pit"][0]
    with pytest.raises(BackendError, match="unmerged"):
        ask(open_pack, question, audio=[str(open_pack / question.audio[0])])


def test_oracle_answers_through_the_backend_interface(answers, open_pack):
    question, chosen = answers["rad"][0]
    prompt = Prompt(benchmark="AcousticBench", question_id=question.id, task="rad", text=question.prompt, audio=[str(open_pack / r) for r in question.audio], seed=42)
    reply = asyncio.run(ORACLE.answer(prompt))
    assert reply.text == chosen and reply.model_id == "Oracle"


def test_built_pack_matches_the_pinned_manifest_hash(open_pack):
    assert manifest_sha256(open_pack) == OPEN_PACK_MANIFEST_SHA256


def test_rebuild_in_one_process_is_byte_identical(open_pack, tmp_path):
    """Questions rebuilt alone, in another order, in this process, equal those of the parallel full build."""
    numbers = {400, 3, 1, 401, 426, 451, 475}
    rebuilt = build.build_tasks(tmp_path, CODES, workers=1, numbers=numbers)
    for code in CODES:
        full = {q.id: q for q in load_questions(open_pack, code)}
        assert len(rebuilt[code]) == len(numbers)
        for question in rebuilt[code]:
            assert question == full[question.id]
            for rel in question.audio:
                assert (tmp_path / rel).read_bytes() == (open_pack / rel).read_bytes()


def test_build_refuses_a_folder_that_holds_a_pack(tmp_path):
    root = tmp_path / "archive"
    root.mkdir()
    (root / MANIFEST).write_text("{}")
    with pytest.raises(UserError, match="choose another --archive, or move that pack away first"):
        build.build_open_pack(root)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["archive"]


def test_interrupted_build_leaves_nothing_behind(tmp_path):
    """Ctrl-C while the workers write clips (the moment the pool starts is test_interrupts' own)."""
    proc = start_cli("--build-archive", "--archive", str(tmp_path / "archive"),
                     env=harness_env(PYTHONFAULTHANDLER="1"))
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".archive.building-*/*/audio/*.wav")) and time.monotonic() < deadline:
        time.sleep(0.05)  # until the workers have written a clip
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler prints where every thread of the builder is
        pytest.fail("the build did not stop on Ctrl-C:\n" + proc.communicate(timeout=30)[1][-4000:])
    assert proc.returncode == 130, err
    assert list(tmp_path.iterdir()) == []
