"""--export-dataset writes a folder the real `datasets` library loads (one config per task, the pack's splits, the
WAV bytes intact), and --import-dataset rebuilds the pack from it byte for byte, refusing an export that was altered."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from acousticbench.cli import main
from harness_cli import files_of, needs, rewrite_first_row

pytestmark = needs("datasets", "pyarrow")


def raw_config(datasets, out: Path, config: str, cache: Path):
    """A config as load_dataset gives it, with the clips kept as their bytes (decoding needs torchcodec)."""
    ds = datasets.load_dataset(str(out), config, cache_dir=str(cache))
    assert ds["train"].features["audio"].feature == datasets.Audio()  # the Audio feature, decoded on the reader's side
    return ds.cast_column("audio", datasets.Sequence(datasets.Audio(decode=False)))


def assert_rows_are_the_pack(ds, pack: Path, task: str) -> int:
    lines = {json.loads(line)["id"]: line for line in (pack / task / "questions.jsonl").read_text().splitlines()}
    n = 0
    for split, rows in ds.items():
        for row in rows:
            question = json.loads(row["question"])
            assert row["question"] == lines[row["id"]] and question["split"] == split == row["split"]
            assert [clip["path"] for clip in row["audio"]] == question["audio"]
            assert all(clip["bytes"] == (pack / clip["path"]).read_bytes() for clip in row["audio"])
            n += 1
    return n


def test_a_pack_exports_loads_with_datasets_and_rebuilds_byte_for_byte(datasets, tiny_pack, tmp_path, capsys):
    out = tmp_path / "export"
    assert main(["--export-dataset", str(out), "--archive", str(tiny_pack)]) == 0
    assert "rows per config: rad 11" in capsys.readouterr().out
    card = (out / "README.md").read_text()
    manifest_sha = hashlib.sha256((tiny_pack / "MANIFEST.json").read_bytes()).hexdigest()
    assert "config_name: rad" in card and 'path: "rad/eval-*.parquet"' in card and manifest_sha in card
    ds = raw_config(datasets, out, "rad", tmp_path / "cache")
    assert sorted(ds) == ["eval", "train"] and assert_rows_are_the_pack(ds, tiny_pack, "rad") == 11

    back = tmp_path / "rebuilt"
    assert main(["--import-dataset", str(out), "--archive", str(back)]) == 0
    assert files_of(back) == files_of(tiny_pack)
    assert main(["--verify-checksums", "--task", "rad", "--archive", str(back)]) == 0
    assert "All 11 questions passed checksum verification." in capsys.readouterr().out


def test_a_folder_that_holds_anything_is_never_written_into(tiny_pack, tmp_path, capsys):
    out = tmp_path / "export"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["--export-dataset", str(out), "--archive", str(tiny_pack)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: python run.py --export-dataset {out} is not an empty folder: give a new or empty one for the dataset "
        "(nothing was written)."]
    assert files_of(out) == {"notes.txt": b"mine"} and not list(tmp_path.glob(".export.*"))


@pytest.mark.parametrize("change, needle", [
    (lambda row: row["audio"][0].update(bytes=row["audio"][0]["bytes"][:-2] + b"\x01\x00"), "sha256 mismatch"),
    (lambda row: row.update(answer="B" if row["answer"] == "A" else "A"), "column answer differs"),
])
def test_an_altered_export_is_refused_and_nothing_is_rebuilt(tiny_pack, tmp_path, capsys, change, needle):
    out = tmp_path / "export"
    assert main(["--export-dataset", str(out), "--archive", str(tiny_pack)]) == 0
    rewrite_first_row(next((out / "rad").glob("train-*.parquet")), change)
    capsys.readouterr()
    assert main(["--import-dataset", str(out), "--archive", str(tmp_path / "rebuilt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "the export was altered" in err[0], err
    assert not (tmp_path / "rebuilt").exists() and not list(tmp_path.glob(".rebuilt.*"))


def test_a_folder_that_is_not_an_export_is_one_line(tiny_pack, tmp_path, capsys):
    assert main(["--import-dataset", str(tiny_pack), "--archive", str(tmp_path / "rebuilt")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {tiny_pack} is not a dataset export of this harness (acousticbench_export.json not found): export "
        "one with `python run.py --export-dataset DIR`.")


def test_the_open_pack_exports_475_rows_per_task_and_rebuilds_to_its_manifest(datasets, open_pack, tmp_path, capsys):
    out = tmp_path / "export"
    assert main(["--export-dataset", str(out), "--archive", str(open_pack)]) == 0
    tasks = json.loads((open_pack / "MANIFEST.json").read_text())["tasks"]
    for task in tasks:
        ds = raw_config(datasets, out, task, tmp_path / "cache")
        assert sum(len(split) for split in ds.values()) == 475 == assert_rows_are_the_pack(ds, open_pack, task)
    back = tmp_path / "rebuilt"
    assert main(["--import-dataset", str(out), "--archive", str(back)]) == 0
    assert (back / "MANIFEST.json").read_bytes() == (open_pack / "MANIFEST.json").read_bytes()
    capsys.readouterr()
    assert main(["--verify-checksums", "--task", "all", "--archive", str(back)]) == 0
    assert capsys.readouterr().out.startswith("All 3800 questions passed checksum verification.")
