"""Checksum verification: what `--verify-checksums` reports for intact and damaged packs."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from acousticbench.benchmarks.acoustic import pack
from acousticbench.benchmarks.acoustic.pack.verify import pinned_pack_note, verify_checksums
from acousticbench.core.audio import write_wav
from acousticbench.core.errors import ArchiveError
from acousticbench.benchmarks.acoustic.records import Question


def make_pack(root: Path, tasks: tuple[str, ...] = ("pit", "rad"), n: int = 4) -> Path:
    """A tiny pack: per task `n` two-clip questions, one identical pair (one file twice) and a swap twin of the first."""
    rng = np.random.default_rng(0)
    hashes, meta = {}, {}
    for task in tasks:
        (root / task / "audio").mkdir(parents=True)
        questions = []
        for i in range(1, n + 1):
            audio = [f"{task}/audio/{task}_{i:04d}_{k}.wav" for k in (1, 2)]
            for path in audio:
                write_wav(root / path, rng.uniform(-0.5, 0.5, 160).astype(np.float32))
            questions.append(_question(root, f"{task}_{i:04d}", task, audio, "A"))
        questions.append(_question(root, f"{task}_{n + 1:04d}", task, [questions[1].audio[0]] * 2, None, "diagnostic"))
        questions.append(_question(root, f"{task}_{n + 2:04d}", task, questions[0].audio[::-1], "B", "diagnostic"))
        hashes[pack.questions_relpath(task)] = pack.write_questions(root, task, questions)
        meta[task] = {"title": task, "clips": 2, "n_scored": n, "n_diagnostic": 2}
    pack.write_manifest(root, "AcousticBench-test", "0", meta, hashes)
    return root


def _question(root: Path, qid: str, task: str, audio: list[str], answer: str | None,
              kind: str = "scored") -> Question:
    sums = {p: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in audio}
    return Question(
        id=qid, task=task, split="eval", kind=kind, prompt="Which clip is higher?\nA. first\nB. second",
        audio=audio, answer=answer, meta={"level": 1}, sha256=sums,
    ).sealed()


def rewrite_line(root: Path, task: str, qid: str, change, reseal_manifest: bool) -> None:
    """Apply `change` to one question's JSON; optionally update MANIFEST.json as a careful editor would."""
    path = root / pack.questions_relpath(task)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for data in lines:
        if data["id"] == qid:
            change(data)
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    if reseal_manifest:
        manifest = json.loads((root / pack.MANIFEST).read_text())
        manifest["sha256"][pack.questions_relpath(task)] = hashlib.sha256(path.read_bytes()).hexdigest()
        (root / pack.MANIFEST).write_text(json.dumps(manifest))


@pytest.fixture
def pack_root(tmp_path) -> Path:
    return make_pack(tmp_path / "archive")


def test_intact_pack_passes_with_the_number_of_questions_checked(pack_root):
    assert verify_checksums(pack_root, ["pit", "rad"]).lines() == ["All 12 questions passed checksum verification."]
    assert verify_checksums(pack_root, ["rad"]).lines() == ["All 6 questions passed checksum verification."]


def test_one_flipped_byte_names_exactly_that_question_and_file(pack_root):
    wav = pack_root / "rad/audio/rad_0003_2.wav"
    data = bytearray(wav.read_bytes())
    data[100] ^= 0x01
    wav.write_bytes(bytes(data))
    lines = verify_checksums(pack_root, ["pit", "rad"]).lines()
    assert len(lines) == 3
    assert lines[0].startswith("rad_0003: rad/audio/rad_0003_2.wav: sha256 mismatch (expected ")
    assert lines[1] == "1 of 12 questions failed checksum verification."
    assert "acousticbench pack build" in lines[2]


def test_damaged_shared_file_names_every_question_that_uses_it(pack_root):
    # rad_0001's first clip is also the second clip of its order-swapped twin rad_0006.
    (pack_root / "rad/audio/rad_0001_1.wav").write_bytes(b"not audio")
    report = verify_checksums(pack_root, ["rad"])
    assert report.failed_questions == ["rad_0001", "rad_0006"]
    assert all(f.path == "rad/audio/rad_0001_1.wav" for f in report.failures)


def test_edited_prompt_names_exactly_that_question(pack_root):
    rewrite_line(pack_root, "pit", "pit_0002", lambda d: d.update(prompt=d["prompt"].replace("higher", "hIgher")), True)
    lines = verify_checksums(pack_root, ["pit", "rad"]).lines()
    assert lines[0] == "pit_0002: pit/questions.jsonl: question checksum mismatch (the question text was changed)"
    assert lines[1] == "1 of 12 questions failed checksum verification."


def test_edited_questions_file_is_caught_by_the_manifest_too(pack_root):
    rewrite_line(pack_root, "pit", "pit_0002", lambda d: d.update(answer="B"), False)
    lines = verify_checksums(pack_root, ["pit"]).lines()
    assert lines[0].startswith("pit/questions.jsonl: sha256 does not match MANIFEST.json (expected ")
    assert lines[1].startswith("pit_0002: pit/questions.jsonl: question checksum mismatch")
    assert lines[2] == "1 of 6 questions failed checksum verification. 1 questions file did not match MANIFEST.json."


def test_deleted_question_is_caught_only_by_the_manifest(pack_root):
    path = pack_root / "pit/questions.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[1:]))
    lines = verify_checksums(pack_root, ["pit"]).lines()
    assert lines[0].startswith("pit/questions.jsonl: sha256 does not match MANIFEST.json")
    assert lines[1] == "pit/questions.jsonl: holds 3 scored questions, MANIFEST.json says 4 (tasks.pit.n_scored)"
    assert lines[2].startswith("0 of 5 questions failed checksum verification. 1 questions file")


def test_missing_file_is_named(pack_root):
    (pack_root / "pit/audio/pit_0004_1.wav").unlink()
    lines = verify_checksums(pack_root, ["pit"]).lines()
    assert lines[:2] == ["pit_0004: pit/audio/pit_0004_1.wav: file missing", "1 of 6 questions failed checksum verification."]


def test_audio_without_recorded_sha256_fails(pack_root):
    def drop_hash(data):
        del data["sha256"]["pit/audio/pit_0001_2.wav"]
        data["checksum"] = Question.model_validate(data).compute_checksum()

    rewrite_line(pack_root, "pit", "pit_0001", drop_hash, True)
    report = verify_checksums(pack_root, ["pit"])
    assert [f.line() for f in report.failures] == [
        "pit_0001: pit/audio/pit_0001_2.wav: no sha256 recorded for this file in the question"
    ]


def test_audio_path_outside_the_pack_is_not_read(pack_root):
    def escape(data):
        data["audio"][0] = "../../etc/passwd"
        data["checksum"] = Question.model_validate(data).compute_checksum()

    rewrite_line(pack_root, "pit", "pit_0003", escape, True)
    report = verify_checksums(pack_root, ["pit"])
    assert [f.line() for f in report.failures] == [
        "pit_0003: ../../etc/passwd: audio path points outside the pack folder (a path with '..')"]


def test_a_clip_that_is_a_link_leading_out_fails_verification_as_it_fails_a_run(pack_root, tmp_path):
    clip = pack_root / "pit" / "audio" / "pit_0002_1.wav"
    outside = tmp_path / "elsewhere.wav"
    outside.write_bytes(clip.read_bytes())  # the same bytes and sha256: only where it leads is wrong
    clip.unlink()
    clip.symlink_to(outside)
    report = verify_checksums(pack_root, ["pit"])
    why = "audio path points outside the pack folder (a link that leads outside the pack)"
    # pit_0005 is pit_0002's order-swapped twin: it uses the same clip
    assert [f.line() for f in report.failures] == [f"pit_0002: pit/audio/pit_0002_1.wav: {why}",
                                                   f"pit_0005: pit/audio/pit_0002_1.wav: {why}"]


def test_malformed_line_is_an_error_naming_file_and_line(pack_root):
    path = pack_root / "pit/questions.jsonl"
    path.write_text(path.read_text().replace('"split":"eval"', '"split":"test"', 1))
    with pytest.raises(ArchiveError, match=r"pit/questions.jsonl:1: malformed question"):
        verify_checksums(pack_root, ["pit"])


def test_pinned_note_only_for_a_differing_open_pack(pack_root):
    actual = pack.manifest_sha256(pack_root)
    assert pinned_pack_note(pack_root, pinned_benchmark="AcousticBench-test", pinned_sha256=actual) is None
    assert pinned_pack_note(pack_root, pinned_benchmark="AcousticBench-open", pinned_sha256="0" * 64) is None
    note = pinned_pack_note(pack_root, pinned_benchmark="AcousticBench-test", pinned_sha256="0" * 64)
    assert note is not None and "\n" not in note
    assert actual[:12] in note and "000000000000" in note and "published" in note


def test_a_damaged_line_with_no_readable_id_counts_as_a_question_not_a_file(pack_root):
    path = pack_root / "pit" / "questions.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[2] = b'{"\xff' + lines[2][2:]  # the damage hits the id itself
    path.write_bytes(b"\n".join(lines))
    out = verify_checksums(pack_root, ["pit"]).lines()
    assert out[0].startswith("line 3: pit/questions.jsonl: line 3: byte 3 is not UTF-8")
    assert "1 of 6 questions failed checksum verification. 1 questions file did not match MANIFEST.json." in out
