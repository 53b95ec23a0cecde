"""The open AudioICL pack: public layout, nested demos, byte-identical rebuilds, checksums, and the Oracle's ceiling."""
from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from acousticbench.benchmarks.audioicl import TASKS
from acousticbench.benchmarks.audioicl.build import build_audioicl
from acousticbench.benchmarks.audioicl.episodes import load_episodes
from acousticbench.benchmarks.audioicl.oracle import solve
from acousticbench.benchmarks.audioicl.pack import manifest_sha256, pack_root, verify_audioicl
from acousticbench.benchmarks.audioicl.prompts import build_prompt, load_alphabet
from acousticbench.benchmarks.audioicl.scoring import score
from acousticbench.core.errors import UserError
from audioicl_pack import EPISODES, env_without_espeak, reduced_pack
from conftest import REPO
from harness_cli import python

# MANIFEST.json of the reduced pack (EPISODES per task): its bytes are the same on every machine
REDUCED_MANIFEST_SHA256 = "f4fca2ff92b0b6ac12b94863a7b375fc8d398ae436c86806a4fb37ce7d05818b"


@pytest.fixture(scope="module")
def pack() -> Path:
    return pack_root(reduced_pack())


def test_the_pack_has_the_public_layout_and_nested_demos(pack):
    assert sorted(p.name for p in (pack / "meta").iterdir()) == [f"meta_k{k}.jsonl" for k in range(1, 6)]
    by_k = {k: load_episodes(pack / "meta", k) for k in range(1, 6)}
    assert len(by_k[1]) == len(TASKS) * EPISODES
    assert by_k[1][0].id == "AudioICL00001" and by_k[1][EPISODES].id == "AudioICL00301"
    for k in range(1, 5):  # the k-shot demos are the first k of the k+1-shot demos; the query is the same
        for small, large in zip(by_k[k], by_k[k + 1]):
            assert small.id == large.id and small.query == large.query and small.demos == large.demos[:k]
    assert sorted(p.name for p in (pack / "data" / "MorseCode" / "alphabet").iterdir())[:2] == ["A.wav", "B.wav"]
    import soundfile as sf

    info = sf.info(str(pack / by_k[5][0].query.audio_path))
    assert (info.samplerate, info.channels, info.subtype) == (16000, 1, "PCM_16")


@pytest.mark.slow  # a second build of the reduced pack, on one worker
def test_two_builds_are_byte_identical_whatever_the_worker_count(pack, tmp_path):
    build_audioicl(tmp_path, episodes_per_task=EPISODES, workers=1)
    files = sorted(p.relative_to(pack) for p in pack.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "audioicl") for p in (tmp_path / "audioicl").rglob("*") if p.is_file())
    assert all((pack / f).read_bytes() == (tmp_path / "audioicl" / f).read_bytes() for f in files)


@pytest.mark.slow  # a second build of the reduced pack, in a fresh process
def test_a_build_in_a_fresh_process_without_espeak_is_byte_identical(pack, tmp_path):
    code = (f"from acousticbench.benchmarks.audioicl.build import build_audioicl; "
            f"print(build_audioicl({str(tmp_path / 'archive')!r}, episodes_per_task={EPISODES}, workers=2))")
    out = python("-c", code, cwd=REPO, env=env_without_espeak(tmp_path / "bin"), timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == manifest_sha256(pack) == REDUCED_MANIFEST_SHA256


# sha256 over the float64 bytes of every spoken digit, in (digit, voice) order: what the builder and the Oracle hear
SPOKEN_DIGITS_SHA256 = "d8d84aab4146f1541207ddadc17a29d44e7c0245ce977c59d1bdf8a27a8e01d1"


def test_the_builder_speaks_the_pinned_digits():
    import hashlib

    from acousticbench.benchmarks.audioicl.build.speech import DIGITS, VOICES, all_digits

    spoken = all_digits()
    assert set(spoken) == {(d, v) for d in DIGITS for v in range(len(VOICES))}
    assert all(wave.dtype == np.float64 and np.abs(wave).max() == 0.5 for wave in spoken.values())  # peak PEAK
    assert sum(len(wave) for wave in spoken.values()) == 178_483  # 11.2 s at 16 kHz
    h = hashlib.sha256()
    for key in sorted(spoken):
        h.update(spoken[key].tobytes())
    assert h.hexdigest() == SPOKEN_DIGITS_SHA256  # a changed file, decoding or scaling shows here


def test_the_package_data_ships_every_digit_file():
    """pyproject's package-data (what a non-editable `pip install .` copies) names every shipped digit file."""
    from acousticbench.benchmarks.audioicl.build.speech import FOLDER

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    globs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    shipped = {p for pattern in globs["acousticbench.benchmarks.audioicl.build"] for p in FOLDER.parent.glob(pattern)}
    assert shipped == set(FOLDER.iterdir()) and len(shipped) == 28


def test_checksums_pass_and_catch_a_changed_or_missing_clip(pack, tmp_path):
    report = verify_audioicl(pack)
    assert report.ok and report.lines() == [f"All {len(TASKS) * EPISODES} AudioICL episodes passed checksum verification "
                                            f"({report.n_files} files: meta_k1..5.jsonl and every clip)."]
    copy = tmp_path / "audioicl"
    shutil.copytree(pack, copy)
    episode = json.loads((copy / "meta" / "meta_k1.jsonl").read_text().splitlines()[0])
    changed = copy / episode["query"]["audio_path"]
    changed.write_bytes(changed.read_bytes()[:-2] + b"\0\0")
    missing = copy / episode["demos"][0]["audio_path"]
    missing.unlink()
    lines = verify_audioicl(copy).lines()
    assert any(line.startswith(f"{episode['query']['audio_path']}: sha256 mismatch") for line in lines)
    assert f"{episode['demos'][0]['audio_path']}: file missing" in lines
    assert "2 of" in lines[-2] and "acousticbench build-audioicl" in lines[-1]


def test_a_pack_built_with_other_spoken_digits_is_flagged(pack, tmp_path):
    from acousticbench.benchmarks.audioicl.pack import MANIFEST, pinned_note

    shutil.copytree(pack, tmp_path / "audioicl")
    manifest = json.loads((tmp_path / "audioicl" / MANIFEST).read_text())
    assert pinned_note(tmp_path / "audioicl").endswith(f"it has {len(TASKS) * EPISODES} episodes or another harness "
                                                       "version built it; results may not compare.")
    (tmp_path / "audioicl" / MANIFEST).write_text(json.dumps({**manifest, "spoken_digits": "0" * 64}))
    assert "it was built with other spoken digits" in pinned_note(tmp_path / "audioicl")


def test_building_over_an_existing_pack_is_refused(pack):
    with pytest.raises(UserError, match="already exists: choose another --archive.*or move that folder away"):
        build_audioicl(pack.parent, episodes_per_task=1)


@pytest.mark.slow  # the ideal observer over every task and shot count; the inner loop keeps its rule tests
def test_oracle_reaches_095_on_every_task_at_three_shots(pack):
    correct = defaultdict(list)
    alphabet = load_alphabet(pack / "data" / "MorseCode" / "alphabet")
    for episode in load_episodes(pack / "meta", 3):
        prompt = build_prompt(episode, pack, style="specific", seed=42, alphabet=alphabet)
        correct[episode.task].append(score(episode.task, solve(prompt), episode.gt)[1])
    accuracy = {task: sum(v) / len(v) for task, v in correct.items()}
    assert set(accuracy) == set(TASKS) and min(accuracy.values()) >= 0.95, accuracy


@pytest.mark.parametrize("rule", ["add", "sub", "mul"])
def test_oracle_takes_the_rule_from_the_demos(pack, rule):
    """Relabel an operator episode's demos by another rule: the Oracle's answer follows the demos, not the pack."""
    import re

    from acousticbench.benchmarks.audioicl.oracle_symbols import OPS, _operator_clip

    episode = load_episodes(pack / "meta", 3, ["AudioOperator"])[0]
    prompt = build_prompt(episode, pack, style="none", seed=1)
    digits = [_operator_clip(path)[0] for path in prompt.audio]
    lines = prompt.text.splitlines()
    relabelled = [re.sub(r"Label: .*", f"Label: {OPS[rule](*digits[i])}", ln) for i, ln in enumerate(lines[:-1])]
    taught = prompt.model_copy(update={"text": "\n".join([*relabelled, lines[-1]])})
    assert solve(taught) == str(OPS[rule](*digits[-1]))
