"""--resume across versions: a run continues only on the pack, the settings, the judge and the served model it was
started with, else one line naming what differs, exit 2, and nothing in the results folder changes; a run another
version of the harness wrote is named by that version."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs
from servers import openai_server
from servers.fixtures import records
from test_faults import RUN, VARIABLE, assert_one_line, snapshot


def interrupted(run_dir: Path, keep: int) -> None:
    """What a run stopped part-way leaves: its first `keep` records and no metrics.json."""
    path = run_dir / "responses.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:keep]))
    (run_dir / "metrics.json").unlink()


def started_run(tmp_path: Path, *flags: str, keep: int = 4, env: dict | None = None) -> tuple[Path, Path]:
    archive = write_tiny_pack(tmp_path / "archive")
    out = run_cli(*RUN, "--archive", str(archive), *flags, cwd=tmp_path, env=env or harness_env())
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    interrupted(run_dir, keep)
    return archive, run_dir


def rebuilt_as_another_version(archive: Path) -> None:
    """The same questions under a new pack version: its manifest (and so the hash a run records) changes."""
    from acousticbench.benchmarks.acoustic.pack import write_manifest

    manifest = json.loads((archive / "MANIFEST.json").read_text())
    write_manifest(archive, manifest["benchmark"], "2.0", manifest["tasks"], manifest["sha256"])


def test_resume_after_the_pack_was_rebuilt_is_refused_and_touches_nothing(tmp_path):
    archive, run_dir = started_run(tmp_path)
    recorded = json.loads((run_dir / "config.json").read_text())["archive"]["manifest_sha256"]
    rebuilt_as_another_version(archive)
    before = snapshot(tmp_path / "results")
    out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, f"--resume: the latest run {run_dir.relative_to(tmp_path)}",
                    f"pack_manifest_sha256 {recorded[:12]} ->", "start a new run on this pack")
    assert snapshot(tmp_path / "results") == before  # the first version's hash is still the one on record


def test_resume_on_the_same_pack_finishes_with_every_question_once(tmp_path):
    archive, run_dir = started_run(tmp_path)
    recorded = json.loads((run_dir / "config.json").read_text())["archive"]
    out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path, env=harness_env())
    assert out.returncode == 0 and "4 kept from the earlier run" in out.stdout, out.stdout + out.stderr
    ids = [r["id"] for r in records(run_dir)]
    assert ids == sorted(set(ids)) and len(ids) == 11 and (run_dir / "metrics.json").is_file()
    assert json.loads((run_dir / "config.json").read_text())["archive"]["manifest_sha256"] == recorded["manifest_sha256"]


def test_resume_with_other_numbers_changing_settings_is_refused(tmp_path):
    archive, _ = started_run(tmp_path, "--max-samples", "8")
    before = snapshot(tmp_path / "results")
    out = run_cli(*RUN, "--archive", str(archive), "--max-samples", "6", "--resume", cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, "max_samples 8 -> 6", "rerun without --resume or with the same settings")
    assert snapshot(tmp_path / "results") == before


def test_resume_after_the_judge_rules_changed_is_refused(tmp_path):
    archive, run_dir = started_run(tmp_path)
    config = json.loads((run_dir / "config.json").read_text())
    config["settings"]["judge_rules_version"] = "rules-1"  # what an older harness labelled the first half with
    (run_dir / "config.json").write_text(json.dumps(config))
    before = snapshot(tmp_path / "results")
    out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, "judge_rules_version 'rules-1' ->")
    assert snapshot(tmp_path / "results") == before


def test_resume_of_audioicl_after_its_episodes_changed_is_refused(tmp_path):
    from audioicl_pack import reduced_pack

    pack = reduced_pack()
    meta = tmp_path / "meta"
    shutil.copytree(pack / "audioicl" / "meta", meta)
    args = ("--model", "Oracle", "--task", "AudioCount", "--shots", "1", "--max-samples", "4", "--icl-meta", str(meta),
            "--icl-base", str(pack / "audioicl"))
    assert run_cli(*args, cwd=tmp_path, env=harness_env()).returncode == 0
    (run_dir,) = run_dirs(tmp_path / "results")
    interrupted(run_dir, 2)
    lines = (meta / "meta_k1.jsonl").read_text().splitlines(keepends=True)
    (meta / "meta_k1.jsonl").write_text("".join(lines[1:] + lines[:1]))  # the same episodes, rebuilt in another order
    before = snapshot(tmp_path / "results")
    out = run_cli(*args, "--resume", cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, "episodes_sha256", "start a new run on this pack")
    assert snapshot(tmp_path / "results") == before


def test_resume_when_the_server_now_serves_another_model_is_refused(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    voxtral = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--archive", str(archive))
    with openai_server.serve() as server:
        assert run_cli(*voxtral, cwd=tmp_path, env=harness_env(**{VARIABLE: server.url})).returncode == 0
    (run_dir,) = run_dirs(tmp_path / "results")
    interrupted(run_dir, 4)
    before = snapshot(tmp_path / "results")
    with openai_server.serve(model_ids=["someone/else-7b"]) as server:
        out = run_cli(*voxtral, "--resume", cwd=tmp_path, env=harness_env(**{VARIABLE: server.url}))
        asked = [r for r in server.received if r.path == "/v1/chat/completions"]
    assert_one_line(out, 2, "was answered by 'local/served-model'", "now serves 'someone/else-7b'")
    assert not asked and snapshot(tmp_path / "results") == before


def written_by(run_dir: Path, version: str) -> None:
    config = json.loads((run_dir / "config.json").read_text())
    config["harness"]["version"] = version
    (run_dir / "config.json").write_text(json.dumps(config))


def test_resume_of_a_run_a_newer_harness_wrote_is_refused_naming_its_version(tmp_path):
    archive, run_dir = started_run(tmp_path)
    written_by(run_dir, "9.1.0")
    before = snapshot(tmp_path / "results")
    out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, "was written by acousticbench 9.1.0", "update acousticbench to 9.1.0 or later")
    assert "delete" not in out.stderr and "remove" not in out.stderr
    assert snapshot(tmp_path / "results") == before


def test_resume_of_a_run_an_older_harness_wrote_continues_it_past_a_torn_last_line(tmp_path):
    archive, run_dir = started_run(tmp_path)
    written_by(run_dir, "0.0.9")
    with (run_dir / "responses.jsonl").open("a") as fh:
        fh.write('{"id":"rad_0005","benchmark":"AcousticBench","model":"Ora')  # the kill that stopped it
    out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path, env=harness_env())
    assert out.returncode == 0, out.stderr
    assert len(records(run_dir)) == 11 and (run_dir / "metrics.json").is_file()


def test_asking_failed_questions_again_on_a_rebuilt_pack_is_refused(tmp_path):
    from harness_cli import script

    archive, run_dir = started_run(tmp_path, keep=11)
    path = run_dir / "responses.jsonl"
    rows = records(run_dir)
    rows[0] = {**rows[0], "status": "error", "chosen": None, "response": None, "error": "HTTP 500"}
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rebuilt_as_another_version(archive)
    before = snapshot(tmp_path / "results")
    out = script("rerun_nones.py", "--model", "Oracle", str(run_dir), cwd=tmp_path)
    assert_one_line(out, 2, "was made on another pack", "pack_manifest_sha256", "nothing was asked or changed")
    assert snapshot(tmp_path / "results") == before
