"""--export-dataset writes the AudioICL pack as a `clips` config and a config per task that the real `datasets` library
loads and joins, and --import-dataset rebuilds every file of it (beside an AcousticBench pack) byte for byte,
refusing an export that was altered."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from acousticbench.cli import main
from audioicl_pack import reduced_pack
from conftest import write_tiny_pack
from harness_cli import needs, rewrite_first_row

pytestmark = needs("datasets", "pyarrow")

EPISODES = 2  # per task: every task's episode shapes (one clip, A/B/MIX, Normal/Anomalous) in a small build


def sha256_of_files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[Path, Path]:
    """(an archive holding an AcousticBench pack and an AudioICL pack, its export), made once for the module."""
    root = tmp_path_factory.mktemp("iclhf")
    archive = write_tiny_pack(root / "archive", "rad", 8)
    shutil.copytree(reduced_pack(EPISODES) / "audioicl", archive / "audioicl")
    assert main(["--export-dataset", str(root / "export"), "--archive", str(archive)]) == 0
    return archive, root / "export"


def altered_copy(exported, tmp_path: Path) -> Path:
    out = tmp_path / "export"
    shutil.copytree(exported[1], out)
    return out


def test_the_export_loads_with_datasets_and_every_episode_joins_its_clips(datasets, exported, tmp_path):
    archive, out = exported
    pack = archive / "audioicl"
    manifest = json.loads((pack / "MANIFEST.json").read_text())
    card = (out / "README.md").read_text()
    assert hashlib.sha256((pack / "MANIFEST.json").read_bytes()).hexdigest() in card and "- License: mit" in card
    assert "config_name: clips" in card and 'path: "AudioRemap/k3-*.parquet"' in card and "config_name: rad" in card
    cache = str(tmp_path / "cache")
    clips = datasets.load_dataset(str(out), "clips", split="test", cache_dir=cache)
    assert clips.features["audio"] == datasets.Audio()  # the Audio feature, decoded on the reader's side
    clips = clips.cast_column("audio", datasets.Audio(decode=False))
    wavs = [rel for rel in manifest["sha256"] if rel.endswith(".wav")]
    assert sorted(clips["path"]) == sorted(wavs) and len(clips) == manifest["counts"]["audio_files"]
    at = {path: i for i, path in enumerate(clips["path"])}
    assert all(clips[i]["audio"]["bytes"] == (pack / path).read_bytes() for path, i in at.items())
    metas = {k: (pack / "meta" / f"meta_k{k}.jsonl").read_text().splitlines() for k in range(1, 6)}
    for task, n in manifest["tasks"].items():
        ds = datasets.load_dataset(str(out), task, cache_dir=cache)
        assert sorted(ds) == ["k1", "k2", "k3", "k4", "k5"] and {len(split) for split in ds.values()} == {n}
        for split, rows in ds.items():
            for row in rows:
                episode = json.loads(row["episode"])
                assert row["episode"] == metas[row["k"]][row["line"]] and split == f"k{row['k']}"
                assert row["answer"] == episode["query"]["label"] and len(episode["demos"]) == row["k"]
                assert all(path in at for path in row["clips"]) and row["labels"][-1] is None
                assert row["prompt"].count("<audio ") == len(row["clips"]) == len(row["tags"])


def test_import_rebuilds_both_packs_byte_for_byte_and_they_verify(exported, tmp_path, capsys):
    archive, out = exported
    back = tmp_path / "rebuilt"
    capsys.readouterr()
    assert main(["--import-dataset", str(out), "--archive", str(back)]) == 0
    said = capsys.readouterr().out
    assert f"AudioICL-open 1.1, {9 * EPISODES} episodes" in said and "11 questions" in said
    assert sha256_of_files(back) == sha256_of_files(archive)
    assert main(["--verify-checksums", "--task", "rad,audioicl", "--archive", str(back)]) == 0
    said = capsys.readouterr().out
    assert "All 11 questions passed" in said and f"All {9 * EPISODES} AudioICL episodes passed" in said


def _flip_last_byte(row: dict) -> None:
    data = row["audio"]["bytes"]
    row["audio"]["bytes"] = data[:-1] + bytes([data[-1] ^ 1])


def _index_naming(benchmark: str):
    def change(out: Path) -> None:
        index = json.loads((out / "acousticbench_export.json").read_text())
        index["parts"][-1]["benchmark"] = benchmark
        (out / "acousticbench_export.json").write_text(json.dumps(index))
    return change


@pytest.mark.parametrize("change, needle", [
    (lambda out: next((out / "clips").glob("test-*.parquet")).unlink(), "is missing: the export at"),
    (lambda out: rewrite_first_row(next((out / "clips").glob("test-*.parquet")), _flip_last_byte), "sha256 mismatch"),
    (lambda out: rewrite_first_row(next((out / "AudioCount").glob("k2-*.parquet")),
                                    lambda row: row.update(answer="9" if row["answer"] != "9" else "8")),
     "column answer in AudioCount differs from its episode line"),
    (_index_naming("AudioNope"), "holds a AudioNope pack, which this harness cannot import"),
])
def test_an_altered_export_is_one_line_and_nothing_is_rebuilt(exported, tmp_path, capsys, change, needle):
    out = altered_copy(exported, tmp_path)
    change(out)
    capsys.readouterr()
    assert main(["--import-dataset", str(out), "--archive", str(tmp_path / "rebuilt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not (tmp_path / "rebuilt").exists() and not list(tmp_path.glob(".rebuilt.*"))


def test_an_export_of_some_tasks_holds_their_clips_and_is_refused_as_a_pack(exported, tmp_path, capsys):
    archive, _ = exported
    out = tmp_path / "export"
    assert main(["--export-dataset", str(out), "--task", "AudioRemap", "--archive", str(archive)]) == 0
    index = json.loads((out / "acousticbench_export.json").read_text())
    assert [list(p["configs"]) for p in index["parts"]] == [["AudioRemap", "clips"]]
    import pyarrow.parquet as pq

    clips = {row["path"] for row in pq.read_table(next((out / "clips").glob("test-*.parquet"))).to_pylist()}
    assert clips and all(path.startswith("data/audioremap/") for path in clips)
    capsys.readouterr()
    assert main(["--import-dataset", str(out), "--archive", str(tmp_path / "rebuilt")]) == 2
    assert "export again without --task" in capsys.readouterr().err and not (tmp_path / "rebuilt").exists()


def test_an_export_given_as_the_archive_says_how_to_rebuild_the_pack(exported, capsys):
    _, out = exported
    capsys.readouterr()
    assert main(["--verify-checksums", "--task", "audioicl", "--archive", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {out} is a dataset export, not a pack: rebuild the pack from it with `python run.py --import-dataset "
        f"{out} --archive PACK`, then pass --archive PACK.")
