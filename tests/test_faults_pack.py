"""A pack that describes itself wrongly, or whose clips are not what it promises, resealed so every checksum holds:
a run refuses it before anything starts (exit 2, one line naming the file or question), --verify-checksums names
it (exit 1), and no file changes."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from acousticbench.benchmarks.acoustic.pack import load_questions, write_manifest, write_questions
from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli
from test_faults import RUN, assert_one_line, reseal, snapshot


def manifest_of(archive: Path) -> dict:
    return json.loads((archive / "MANIFEST.json").read_text())


def rewrite_manifest(archive: Path, change) -> None:
    manifest = manifest_of(archive)
    change(manifest)
    (archive / "MANIFEST.json").write_text(json.dumps(manifest))


def manifest_a_list(archive: Path) -> None:
    (archive / "MANIFEST.json").write_text(json.dumps([manifest_of(archive)]))


def clips_a_string(archive: Path) -> None:
    rewrite_manifest(archive, lambda m: m["tasks"]["rad"].update(clips="2"))


def no_counts(archive: Path) -> None:
    rewrite_manifest(archive, lambda m: m.pop("counts"))


def counts_disagree(archive: Path) -> None:
    """Tasks that claim one scored question more than the file holds, with counts that add up: resealed."""
    m = manifest_of(archive)
    tasks = {"rad": {**m["tasks"]["rad"], "n_scored": m["tasks"]["rad"]["n_scored"] + 1}}
    write_manifest(archive, m["benchmark"], m["version"], tasks, m["sha256"])


def id_twice(archive: Path) -> None:
    questions = load_questions(archive, "rad")
    twin = questions[2].model_copy(update={"kind": "scored"})
    digest = write_questions(archive, "rad", [q.sealed() for q in questions] + [twin.sealed()])
    m = manifest_of(archive)
    tasks = {"rad": {**m["tasks"]["rad"], "n_scored": m["tasks"]["rad"]["n_scored"] + 1}}
    write_manifest(archive, m["benchmark"], m["version"], tasks, {"rad/questions.jsonl": digest})


def one_clip(archive: Path) -> None:
    reseal(archive, "rad", lambda q: q if q.id != "rad_0004" else q.model_copy(update={"audio": q.audio[:1]}))


DESCRIPTION = {  # name: (damage, what the run's line names, what verify's line names)
    "manifest a list": (manifest_a_list, ("MANIFEST.json is not a pack manifest",), "MANIFEST.json is not a pack"),
    "clips a string": (clips_a_string, ("MANIFEST.json", "tasks.rad.clips"), "tasks.rad.clips"),
    "no counts": (no_counts, ("MANIFEST.json", "counts: Field required"), "counts: Field required"),
    "counts disagree": (counts_disagree, ("rad/questions.jsonl holds 8 scored questions, MANIFEST.json says 9",),
                        "rad/questions.jsonl: holds 8 scored questions, MANIFEST.json says 9"),
    "id twice": (id_twice, ("question rad_0003", "appears 2 times"), "rad_0003: rad/questions.jsonl: the id appears 2"),
    "one clip of two": (one_clip, ("question rad_0004", "has 1 clips, MANIFEST.json says rad has 2"),
                        "rad_0004: rad/questions.jsonl: has 1 clips"),
}


def resealed_clip(archive: Path, write) -> None:
    """rad_0004's first clip rewritten by `write(path, samples)`, its sha256 and the question resealed."""
    rel = "rad/audio/rad_0004_1.wav"
    samples, _ = sf.read(str(archive / rel), dtype="float32")
    write(archive / rel, samples)
    digest = hashlib.sha256((archive / rel).read_bytes()).hexdigest()
    reseal(archive, "rad", lambda q: q if q.id != "rad_0004" else q.model_copy(update={"sha256": {**q.sha256, rel: digest}}))


FORMATS = {  # name: (how the clip is rewritten, what the line says)
    "8 kHz": (lambda p, x: sf.write(str(p), x, 8000, subtype="PCM_16"), "is 8000 Hz PCM_16 mono, the pack promises 16000"),
    "24-bit": (lambda p, x: sf.write(str(p), x, 16000, subtype="PCM_24"), "is 16000 Hz PCM_24 mono"),
    "stereo": (lambda p, x: sf.write(str(p), np.stack([x, x], 1), 16000, subtype="PCM_16"), "is 16000 Hz PCM_16 stereo, the pack"),
    "NaN samples": (lambda p, x: sf.write(str(p), np.where(np.arange(len(x)) == 7, np.nan, x), 16000, subtype="FLOAT"),
                    "holds NaN or infinite samples"),
    "cut short": (lambda p, x: (sf.write(str(p), x, 16000, subtype="PCM_16"), p.write_bytes(p.read_bytes()[:-101])),
                  "is cut short"),
}


@pytest.mark.parametrize("case", list(DESCRIPTION))
def test_a_pack_that_describes_itself_wrongly_is_refused_and_named(case, tmp_path):
    damage, run_needles, verify_needle = DESCRIPTION[case]
    archive = write_tiny_pack(tmp_path / "archive")
    damage(archive)
    before = snapshot(tmp_path)
    out = run_cli(*RUN, "--archive", str(archive), cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, *run_needles)
    verified = run_cli("--verify-checksums", "--task", "rad", "--archive", str(archive), cwd=tmp_path, env=harness_env())
    assert verified.returncode == 1 and "Traceback" not in verified.stderr, verified.stderr
    assert verify_needle in verified.stdout, verified.stdout
    assert snapshot(tmp_path) == before and not (tmp_path / "results").exists()


@pytest.mark.parametrize("case", list(FORMATS))
def test_a_clip_not_in_the_promised_format_is_never_sent(case, tmp_path):
    write, needle = FORMATS[case]
    archive = write_tiny_pack(tmp_path / "archive")
    resealed_clip(archive, write)
    before = snapshot(tmp_path)
    out = run_cli(*RUN, "--archive", str(archive), cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, "question rad_0004", "rad_0004_1.wav", needle)
    verified = run_cli("--verify-checksums", "--task", "rad", "--archive", str(archive), cwd=tmp_path, env=harness_env())
    assert verified.returncode == 1 and "Traceback" not in verified.stderr, verified.stderr
    assert f"rad_0004: rad/audio/rad_0004_1.wav: {needle}" in verified.stdout, verified.stdout
    assert snapshot(tmp_path) == before and not (tmp_path / "results").exists()


def test_a_pack_that_declares_its_own_format_is_held_to_it(tmp_path):
    """A pack may promise another format in MANIFEST.json's "audio": its clips are held to that promise instead."""
    archive = write_tiny_pack(tmp_path / "archive")
    resealed_clip(archive, lambda p, x: sf.write(str(p), x, 8000, subtype="PCM_16"))
    m = manifest_of(archive)
    write_manifest(archive, m["benchmark"], m["version"], m["tasks"], m["sha256"],
                   audio={"sample_rate": 8000, "sample_format": "PCM_16", "channels": 1})
    out = run_cli(*RUN, "--archive", str(archive), "--max-samples", "1", cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, "question rad_0001", "is 16000 Hz PCM_16 mono, the pack promises 8000 Hz PCM_16 mono")
    verified = run_cli("--verify-checksums", "--task", "rad", "--archive", str(archive), cwd=tmp_path, env=harness_env())
    assert "rad_0001: rad/audio/rad_0001_1.wav: is 16000 Hz" in verified.stdout
    assert "rad_0004_1.wav" not in verified.stdout  # the one clip that keeps the promise


@pytest.mark.slow  # builds an AudioICL pack of its own; the AcousticBench clip-format checks stay in the inner loop
def test_an_audioicl_clip_at_another_rate_is_refused_and_named(tmp_path):
    """The open AudioICL pack promises 16 kHz PCM16 mono too; a clip resampled and resealed in its manifest is not."""
    import shutil

    from audioicl_pack import reduced_pack

    archive = tmp_path / "archive"
    shutil.copytree(reduced_pack(), archive)
    root = archive / "audioicl"
    episode = json.loads((root / "meta" / "meta_k1.jsonl").read_text().splitlines()[0])
    rel = episode["query"]["audio_path"]
    samples, _ = sf.read(str(root / rel), dtype="float32")
    sf.write(str(root / rel), samples[::2], 8000, subtype="PCM_16")
    manifest = json.loads((root / "MANIFEST.json").read_text())
    manifest["sha256"][rel] = hashlib.sha256((root / rel).read_bytes()).hexdigest()
    (root / "MANIFEST.json").write_text(json.dumps(manifest))
    before = snapshot(tmp_path)
    out = run_cli("--model", "Oracle", "--task", episode["task"], "--shots", "1", "--archive", str(archive),
                  cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, f"episode {episode['id']}", rel, "is 8000 Hz PCM_16 mono, the pack promises 16000 Hz")
    verified = run_cli("--verify-checksums", "--task", "audioicl", "--archive", str(archive), cwd=tmp_path,
                       env=harness_env())
    assert verified.returncode == 1 and f"{rel}: is 8000 Hz PCM_16 mono" in verified.stdout, verified.stdout
    assert snapshot(tmp_path) == before and not (tmp_path / "results").exists()
