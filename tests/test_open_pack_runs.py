"""The full open pack end to end: verification, baselines' acceptance figures, and the shipped references."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from acousticbench.benchmarks.acoustic.pack import manifest_sha256
from acousticbench.benchmarks.acoustic.pack.pinned import OPEN_PACK_MANIFEST_SHA256
from acousticbench.run.sweep import run_one
from acousticbench.tools.reference import compare_to_reference, reference_file
from acousticbench.benchmarks.acoustic.spec import acoustic_spec
from acousticbench.benchmarks.audioicl import TASKS as ICL_TASKS
from acousticbench.benchmarks.audioicl.pack import OPEN_MANIFEST_SHA256
from acousticbench.benchmarks.acoustic.tasks import TASKS
from audioicl_pack import env_without_espeak
from conftest import REPO
from harness_cli import run_cli, script

REFERENCES = REPO / "reference_trajectories"


def test_verify_checksums_prints_the_success_line(open_pack):
    out = run_cli("--verify-checksums", "--task", "all", "--archive", str(open_pack))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == "All 3800 questions passed checksum verification."
    assert manifest_sha256(open_pack) == OPEN_PACK_MANIFEST_SHA256


def _run(open_pack, tmp_path, model: str, task: str, seed: int = 42):
    return run_one(acoustic_spec(model=model, task=task, seed=seed, archive=open_pack, results_dir=tmp_path), progress=False)


@pytest.mark.parametrize("task", list(TASKS))
def test_random_is_at_chance_and_always_a_exactly_half(open_pack, tmp_path, task):
    always_a = _run(open_pack, tmp_path, "Always-A", task).metrics.scored
    assert (always_a.n, always_a.accuracy) == (400, 0.5)
    random_acc = _run(open_pack, tmp_path, "Random", task).metrics.scored.accuracy
    # binomial 99% interval around 0.5 for n = 400: 0.5 +- 2.576 * sqrt(0.25 / 400)
    assert 0.5 - 0.0644 <= random_acc <= 0.5 + 0.0644


@pytest.mark.parametrize("model", ["Oracle", "Random", "Always-A"])
def test_shipped_references_rerun_to_a_full_match(open_pack, tmp_path, model):
    for task in TASKS:
        for seed in (42, 43, 44):
            result = _run(open_pack, tmp_path, model, task, seed)
            comparison = compare_to_reference(result.records, reference_file(REFERENCES, model, task, seed))
            assert (comparison.n, comparison.matches) == (475, 475), comparison.mismatches[:5]


def test_reference_summaries_name_the_pinned_archive():
    for summary_path in REFERENCES.glob("*/*/summary.json"):
        summary = json.loads(summary_path.read_text())
        assert summary["archive_manifest_sha256"] == OPEN_PACK_MANIFEST_SHA256
        assert [(r["seed"], r["file"]) for r in summary["runs"]] == [(42, "run_1.jsonl"), (43, "run_2.jsonl"), (44, "run_3.jsonl")]


def test_leaderboard_over_the_shipped_references_matches_the_golden_table():
    out = script("leaderboard.py", "--references", str(REFERENCES), timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (REPO / "tests" / "fixtures" / "leaderboard_references.md").read_text()


def test_compare_reference_on_a_fresh_run(open_pack, tmp_path):
    out = run_cli("--model", "Oracle", "--task", "rad", "--max-samples", "10", "--seed", "42", "--compare-reference",
                  "--archive", str(open_pack), "--results-dir", str(tmp_path), cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert "Reference comparison: 10/10 (100.0%) match (reference_trajectories/Oracle/rad/run_1.jsonl)" in out.stdout


def test_zip64_of_the_pack_extracts_back_and_verifies(open_pack, tmp_path):
    """--zip writes the pack as Zip64; --extract reads it back into a pack that passes verification."""
    from acousticbench.packs.extract import write_zip

    write_zip(open_pack, tmp_path / "pack.zip")
    assert b"PK\x06\x06" in (tmp_path / "pack.zip").read_bytes()[-200:]  # the Zip64 end record
    target = tmp_path / "extracted"
    out = run_cli("--extract", str(tmp_path / "pack.zip"), "--archive", str(target), timeout=300)
    assert out.returncode == 0, out.stderr
    assert manifest_sha256(target) == OPEN_PACK_MANIFEST_SHA256
    out = run_cli("--verify-checksums", "--task", "all", "--archive", str(target))
    assert out.returncode == 0 and "All 3800 questions passed checksum verification." in out.stdout


@pytest.fixture(scope="module")
def open_audioicl_pack(tmp_path_factory):
    """The full open AudioICL pack, as --build-audioicl makes it in a fresh process with no espeak-ng on PATH."""
    folder = tmp_path_factory.mktemp("open_audioicl")
    out = run_cli("--build-audioicl", "--archive", "archive", cwd=folder, env=env_without_espeak(folder / "bin"),
                  timeout=600)
    assert out.returncode == 0, out.stderr
    return folder / "archive"


@pytest.mark.slow
def test_the_audioicl_pack_builds_without_espeak_to_the_pinned_bytes(open_audioicl_pack):
    from acousticbench.benchmarks.audioicl.pack import manifest_sha256, pack_root, verify_audioicl

    assert manifest_sha256(pack_root(open_audioicl_pack)) == OPEN_MANIFEST_SHA256
    assert verify_audioicl(pack_root(open_audioicl_pack)).ok


@pytest.mark.slow
@pytest.mark.parametrize("model", ["Oracle", "Random"])
def test_shipped_audioicl_references_rerun_to_a_full_match(open_audioicl_pack, tmp_path, model):
    out = run_cli("--model", model, "--task", "audioicl", "--shots", "3", "--seed", "43", "--compare-reference",
                  "--archive", str(open_audioicl_pack), cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("Reference comparison:")]
    assert lines == [f"Reference comparison: 300/300 (100.0%) match "
                     f"({REFERENCES}/{model}/{task}/k3/run_2.jsonl)" for task in ICL_TASKS]


def test_audioicl_reference_summaries_cover_every_task_k_and_seed():
    for model in ("Oracle", "Random"):
        cells = {p.parent.relative_to(REFERENCES / model) for p in (REFERENCES / model).glob("*/k*/summary.json")}
        assert cells == {Path(t) / f"k{k}" for t in ICL_TASKS for k in (1, 3, 5)}
        for cell in cells:
            summary = json.loads((REFERENCES / model / cell / "summary.json").read_text())
            assert summary["benchmark"] == "AudioICL" and [r["seed"] for r in summary["runs"]] == [42, 43, 44]
            assert summary["archive_manifest_sha256"] == OPEN_MANIFEST_SHA256  # the pack that pins every clip
