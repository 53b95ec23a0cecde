"""The pack changing under a run: a clip whose bytes, when read to be sent, are not the ones the manifest pins is never
sent or scored; its question is an error record naming the clip and the mismatch, the run exits 1, and --resume asks it
again once the pack is restored. Caught where the clip is read, so neither the check's cache of verified files (which
trusts a file whose size, time and inode are unchanged) nor a replacement in the middle of a run lets it through."""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs
from servers import openai_server
from servers.fixtures import records
from test_faults import VARIABLE

VOXTRAL = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--concurrency", "1")
ORACLE = ("--model", "Oracle", "--task", "rad", "--judge", "rules")
CLIP = "rad/audio/rad_0010_1.wav"  # heard by rad_0010 alone


def replaced_in_place(archive: Path, rel: str = CLIP) -> bytes:
    """The clip's samples changed, its size, modification time and inode kept (what the cache of verified files
    compares): the pack's own bytes are returned."""
    path = archive / rel
    original, st = path.read_bytes(), path.stat()
    with path.open("r+b") as fh:
        fh.seek(len(original) - 64)
        fh.write(bytes(64))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return original


def assert_the_question_is_an_error_naming_the_clip(out, run_dir: Path) -> None:
    assert out.returncode == 1 and "Traceback" not in out.stderr, (out.returncode, out.stderr)
    assert "1 question(s) not asked, their clips changed after the pack was checked" in out.stderr, out.stderr
    by_id = {r["id"]: r for r in records(run_dir)}
    failed = by_id["rad_0010"]
    assert failed["status"] == "error" and failed["chosen"] is None and failed["correct"] is None, failed
    assert "rad_0010_1.wav changed after the pack was checked" in failed["error"], failed["error"]
    assert all(r["status"] == "answered" for i, r in by_id.items() if i != "rad_0010") and len(by_id) == 11


def test_a_clip_replaced_behind_the_verified_files_cache_is_never_sent(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    with openai_server.serve() as server:
        env = harness_env(**{VARIABLE: server.url})
        assert run_cli(*VOXTRAL, "--archive", str(archive), cwd=tmp_path, env=env).returncode == 0
        replaced_in_place(archive)
        asked = len(server.received)
        out = run_cli(*VOXTRAL, "--archive", str(archive), "--results-dir", "second", cwd=tmp_path, env=env)
        sent = len(server.received) - asked
    (run_dir,) = run_dirs(tmp_path / "second")
    assert_the_question_is_an_error_naming_the_clip(out, run_dir)
    assert sent == 10  # the changed clip never went to the model


def test_a_clip_the_oracle_would_measure_is_checked_the_same_way(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    assert run_cli(*ORACLE, "--archive", str(archive), cwd=tmp_path).returncode == 0
    replaced_in_place(archive)
    out = run_cli(*ORACLE, "--archive", str(archive), "--results-dir", "second", cwd=tmp_path)
    (run_dir,) = run_dirs(tmp_path / "second")
    assert_the_question_is_an_error_naming_the_clip(out, run_dir)


def test_a_clip_replaced_in_the_middle_of_a_run_is_caught_where_it_is_read(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    done: dict = {}
    with openai_server.serve(delay_s=0.3) as server:
        env = harness_env(**{VARIABLE: server.url})
        thread = threading.Thread(target=lambda: done.update(out=run_cli(*VOXTRAL, "--archive", str(archive),
                                                                           cwd=tmp_path, env=env)))
        thread.start()
        while len(server.received) < 2 and thread.is_alive():
            time.sleep(0.02)
        replaced_in_place(archive)  # the pre-run check hashed it fresh: only the read for sending can see this
        thread.join()
    (run_dir,) = run_dirs(tmp_path / "results")
    assert_the_question_is_an_error_naming_the_clip(done["out"], run_dir)


def test_resume_asks_the_question_again_once_the_pack_is_restored(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    assert run_cli(*ORACLE, "--archive", str(archive), "--results-dir", "first", cwd=tmp_path).returncode == 0
    original = replaced_in_place(archive)
    assert run_cli(*ORACLE, "--archive", str(archive), cwd=tmp_path).returncode == 1
    (archive / CLIP).write_bytes(original)
    out = run_cli(*ORACLE, "--archive", str(archive), "--resume", cwd=tmp_path)
    assert out.returncode == 0 and "10 kept from the earlier run" in out.stdout, out.stdout + out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    assert {r["status"] for r in records(run_dir)} == {"answered"} and len(records(run_dir)) == 11
    assert json.loads((run_dir / "metrics.json").read_text())["statuses"].get("error", 0) == 0
