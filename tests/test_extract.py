"""Zip64 writing and safe extraction: round trips, and malicious or broken zips refused before anything is written."""
from __future__ import annotations

import hashlib
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from acousticbench.benchmarks.acoustic import pack
from acousticbench.packs.extract import safe_extract, write_zip
from acousticbench.benchmarks.acoustic.pack.verify import verify_checksums
from acousticbench.core.audio import write_wav
from acousticbench.core.errors import ArchiveError, UnsafeArchiveError, UserError
from acousticbench.benchmarks.acoustic.records import Question
from harness_cli import files_of


@pytest.fixture
def pack_root(tmp_path) -> Path:
    """Two tasks of two questions each, the second of each an order-swapped twin sharing the first's files."""
    root = tmp_path / "archive"
    rng = np.random.default_rng(1)
    hashes, meta = {}, {}
    for task in ("lou", "dir"):
        audio = [f"{task}/audio/{task}_0001_{k}.wav" for k in (1, 2)]
        (root / task / "audio").mkdir(parents=True)
        for path in audio:
            write_wav(root / path, rng.uniform(-0.5, 0.5, 320).astype(np.float32))
        sums = {p: hashlib.sha256((root / p).read_bytes()).hexdigest() for p in audio}
        questions = [
            Question(id=f"{task}_{i:04d}", task=task, split="eval", kind="scored", prompt="Which is louder?",
                     audio=order, answer=answer, sha256=sums).sealed()
            for i, order, answer in ((1, audio, "A"), (2, audio[::-1], "B"))
        ]
        hashes[pack.questions_relpath(task)] = pack.write_questions(root, task, questions)
        meta[task] = {"title": task, "clips": 2, "n_scored": 2, "n_diagnostic": 0}
    mono = {"sample_rate": 16_000, "sample_format": "PCM_16", "channels": 1}  # dir too: two mono clips here
    pack.write_manifest(root, "AcousticBench-test", "0", meta, hashes, audio=mono)
    return root


def everything_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


def test_round_trip_gives_identical_files_that_pass_verification(pack_root, tmp_path):
    zip_path = tmp_path / "out" / "pack.zip"
    write_zip(pack_root, zip_path)
    target = tmp_path / "extracted"
    assert safe_extract(zip_path, target) == 7
    assert files_of(target) == files_of(pack_root)
    assert verify_checksums(target, ["lou", "dir"]).lines() == ["All 4 questions passed checksum verification."]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["archive", "extracted", "out"]  # no staging folder left


def test_zip_is_zip64_deterministic_and_stores_wavs(pack_root, tmp_path):
    write_zip(pack_root, tmp_path / "a.zip")
    write_zip(pack_root, tmp_path / "b.zip")
    data = (tmp_path / "a.zip").read_bytes()
    assert b"PK\x06\x06" in data[-200:] and b"PK\x06\x07" in data[-200:]
    assert data == (tmp_path / "b.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        names = zf.namelist()
        assert names == sorted(names) and names[0] == "MANIFEST.json"
        assert {i.compress_type for i in zf.infolist() if i.filename.endswith(".wav")} == {zipfile.ZIP_STORED}
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert zf.testzip() is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.zip", "archive", "b.zip"]  # no partial files


def test_zip_written_inside_the_pack_leaves_itself_out(pack_root):
    for _ in range(2):  # the second time, the first zip is already there
        write_zip(pack_root, pack_root / "pack.zip")
        with zipfile.ZipFile(pack_root / "pack.zip") as zf:
            assert "pack.zip" not in zf.namelist() and len(zf.namelist()) == 7


def test_write_zip_of_a_non_pack_leaves_no_file(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ArchiveError, match="MANIFEST.json"):
        write_zip(tmp_path / "empty", tmp_path / "pack.zip")
    assert not (tmp_path / "pack.zip").exists()


def test_pack_inside_one_top_folder_lands_at_the_target(tmp_path):
    zip_path = tmp_path / "top.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("acousticbench/", b"")
        zf.writestr("acousticbench/MANIFEST.json", b"{}")
        zf.writestr("acousticbench/pit/questions.jsonl", b"")
    assert safe_extract(zip_path, tmp_path / "target") == 2
    assert (tmp_path / "target" / "MANIFEST.json").read_bytes() == b"{}"


def _member(name: str, data: bytes = b"x", mode: int | None = None) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    if mode is not None:
        info.create_system, info.external_attr = 3, mode << 16
    return info, data


MALICIOUS = {  # built on demand: the bomb is 50 MB of zeros before compression
    "parent": lambda: [_member("../evil")],
    "nested-parent": lambda: [_member("rad/../../evil")],
    "absolute": lambda: [_member("/abs")],
    "drive": lambda: [_member("C:/evil")],
    "backslash": lambda: [_member("..\\evil")],
    "symlink": lambda: [_member("link", b"/etc/passwd", 0o120777)],
    "fifo": lambda: [_member("fifo", b"", 0o010644)],
    "bomb": lambda: [_member("zeros.wav", bytes(50 * 2**20))],
    "duplicate": lambda: [_member("pit/a.wav"), _member("pit/a.wav")],
    "file-and-folder": lambda: [_member("pit"), _member("pit/a.wav")],
}
OFFENDER = {"parent": "../evil", "nested-parent": "rad/../../evil", "absolute": "/abs", "drive": "C:/evil",
            "backslash": "..\\\\evil", "symlink": "link", "fifo": "fifo", "bomb": "zeros.wav",
            "duplicate": "pit/a.wav", "file-and-folder": "pit/a.wav"}


@pytest.mark.parametrize("case", sorted(MALICIOUS))
def test_malicious_zip_is_refused_naming_the_member_and_writes_nothing(tmp_path, case):
    zip_path = tmp_path / "in" / "bad.zip"
    zip_path.parent.mkdir()
    with warnings.catch_warnings(), zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as zf:
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name we mean to write
        zf.writestr("MANIFEST.json", b"{}")
        for info, data in MALICIOUS[case]():
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    work = tmp_path / "work"
    target = work / "archive"
    before = everything_under(tmp_path)
    with pytest.raises(UnsafeArchiveError) as err:
        safe_extract(zip_path, target)
    assert f"member '{OFFENDER[case]}'" in str(err.value) and "nothing was written" in str(err.value)
    assert everything_under(tmp_path) == before and not work.exists()


def test_member_failing_mid_extraction_leaves_nothing(tmp_path):
    zip_path = tmp_path / "crc.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("MANIFEST.json", b"{}")
        zf.writestr("pit/audio/a.wav", b"x" * 1000)
    zip_path.write_bytes(zip_path.read_bytes().replace(b"x" * 1000, b"y" + b"x" * 999))
    with pytest.raises(ArchiveError, match=r"'pit/audio/a.wav' is corrupt"):
        safe_extract(zip_path, tmp_path / "target")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crc.zip"]


def test_header_understating_a_member_size_is_refused(tmp_path):
    zip_path = tmp_path / "liar.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        zf.writestr("MANIFEST.json", b"{}")
        zf.writestr("big.wav", b"x" * 100_000)
    data = bytearray(zip_path.read_bytes())
    entry = data.rindex(b"PK\x01\x02")  # central directory entry of big.wav, the last member
    data[entry + 24 : entry + 28] = (10).to_bytes(4, "little")  # its uncompressed size, now a lie
    zip_path.write_bytes(bytes(data))
    with pytest.raises(ArchiveError, match="'big.wav'"):
        safe_extract(zip_path, tmp_path / "target")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["liar.zip"]


def test_existing_pack_at_target_is_not_overwritten(pack_root, tmp_path):
    write_zip(pack_root, tmp_path / "pack.zip")
    with pytest.raises(UserError, match="already holds a benchmark pack.*choose another --archive, or move that pack away"):
        safe_extract(tmp_path / "pack.zip", pack_root)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="not an empty folder"):
        safe_extract(tmp_path / "pack.zip", tmp_path / "busy")
    (tmp_path / "empty").mkdir()
    assert safe_extract(tmp_path / "pack.zip", tmp_path / "empty") == 7


def test_missing_corrupt_or_foreign_zip_is_a_one_line_archive_error(tmp_path):
    (tmp_path / "junk.zip").write_bytes(b"this is not a zip file at all" * 10)
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as zf:
        zf.writestr("readme.txt", b"hello")
    for name, expected in (("absent.zip", "not found"), ("junk.zip", "not a readable zip"), ("other.zip", "not a benchmark pack")):
        with pytest.raises(ArchiveError, match=expected) as err:
            safe_extract(tmp_path / name, tmp_path / "target")
        assert "\n" not in str(err.value)
    assert not (tmp_path / "target").exists()
