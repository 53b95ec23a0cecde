"""Run folders edited or torn between a run and its --resume: resume never deletes or overwrites an answer; it refuses
with one line naming the file (exit 2, nothing changed), or recovers with every answer kept once."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_tiny_pack
from harness_cli import assert_one_line, harness_env, run_cli, run_dirs
from servers.fixtures import records
from test_faults import RUN

UNCHANGED = "nothing was changed"


def answers(run_dir: Path) -> dict[str, bytes]:
    """The run's files that hold answers and settings (the lock file a refusal may open is neither)."""
    return {p.name: p.read_bytes() for p in run_dir.iterdir() if p.name != ".lock"}


def finished_run(tmp_path: Path, *flags: str) -> tuple[Path, Path]:
    archive = write_tiny_pack(tmp_path / "archive")
    out = run_cli(*RUN, "--archive", str(archive), *flags, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    return archive, run_dir


def interrupted(run_dir: Path, keep: int) -> list[bytes]:
    """What a run stopped part-way leaves: its first `keep` lines and no metrics.json; returns the lines kept."""
    path = run_dir / "responses.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)[:keep]
    path.write_bytes(b"".join(lines))
    (run_dir / "metrics.json").unlink()
    return lines


def resume(tmp_path: Path, archive: Path, *flags: str):
    return run_cli(*RUN, "--archive", str(archive), "--resume", *flags, cwd=tmp_path, env=harness_env())


def test_a_lost_config_json_is_refused_by_name_and_no_answer_of_another_split_is_deleted(tmp_path):
    archive, run_dir = finished_run(tmp_path)
    (run_dir / "config.json").unlink()
    (run_dir / "metrics.json").unlink()
    before = answers(run_dir)
    out = resume(tmp_path, archive, "--split", "train")
    assert_one_line(out, 2, f"{run_dir.relative_to(tmp_path)}/config.json is missing", UNCHANGED)
    assert answers(run_dir) == before and len(records(run_dir)) == 11


def test_an_answer_followed_by_an_error_record_of_the_same_question_is_kept_not_asked_again(tmp_path):
    archive, run_dir = finished_run(tmp_path)
    lines = interrupted(run_dir, 4)
    first = json.loads(lines[0])
    failed = {**first, "status": "error", "response": None, "error": "HTTP 500", "chosen": None, "correct": None}
    (run_dir / "responses.jsonl").write_bytes(b"".join(lines) + json.dumps(failed).encode() + b"\n")
    out = resume(tmp_path, archive)
    assert out.returncode == 0 and "4 kept from the earlier run" in out.stdout, out.stdout + out.stderr
    kept = {r["id"]: r for r in records(run_dir)}
    assert len(kept) == 11 and kept[first["id"]] == first  # the paid answer, not a new one (its latency is the first)


def test_two_different_answers_to_one_question_are_refused_naming_both_lines(tmp_path):
    archive, run_dir = finished_run(tmp_path)
    lines = interrupted(run_dir, 4)
    other = {**json.loads(lines[1]), "response": "B", "chosen": "B", "latency_s": 9.5}
    (run_dir / "responses.jsonl").write_bytes(b"".join(lines) + json.dumps(other).encode() + b"\n")
    before = answers(run_dir)
    out = resume(tmp_path, archive)
    assert_one_line(out, 2, "responses.jsonl:5 and line 2 are two different answers to " + other["id"], UNCHANGED)
    assert answers(run_dir) == before


def test_a_copy_of_an_answer_is_kept_once(tmp_path):
    archive, run_dir = finished_run(tmp_path)
    lines = interrupted(run_dir, 4)
    (run_dir / "responses.jsonl").write_bytes(b"".join(lines) + lines[2])
    out = resume(tmp_path, archive)
    assert out.returncode == 0 and "4 kept from the earlier run" in out.stdout, out.stdout + out.stderr
    ids = [r["id"] for r in records(run_dir)]
    assert ids == sorted(set(ids)) and len(ids) == 11 and json.loads(lines[2]) in records(run_dir)


def test_an_answer_of_another_model_in_the_file_is_refused_not_kept_as_this_models(tmp_path):
    archive, run_dir = finished_run(tmp_path)
    lines = interrupted(run_dir, 4)
    stranger = {**json.loads(lines[3]), "model": "Random"}
    lines[3] = json.dumps(stranger).encode() + b"\n"
    (run_dir / "responses.jsonl").write_bytes(b"".join(lines))
    before = answers(run_dir)
    out = resume(tmp_path, archive)
    assert_one_line(out, 2, "responses.jsonl:4 is an answer of Random on rad (seed 42), not of Oracle on rad",
                    UNCHANGED)
    assert answers(run_dir) == before


STRANGERS = {  # a line appended to an interrupted run's file -> what the refusal names
    "another task's answer": ({"id": "pit_0001", "task": "pit"}, "responses.jsonl:5 is an answer of Oracle on pit"),
    "a question this run does not ask": ({"id": "rad_9999"},
                                         "responses.jsonl:5 answers rad_9999, which this run does not ask"),
}


@pytest.mark.parametrize("case", list(STRANGERS))
def test_a_line_this_run_cannot_own_is_refused_not_deleted(case, tmp_path):
    change, needle = STRANGERS[case]
    archive, run_dir = finished_run(tmp_path)
    lines = interrupted(run_dir, 4)
    stranger = {**json.loads(lines[0]), **change}
    (run_dir / "responses.jsonl").write_bytes(b"".join(lines) + json.dumps(stranger).encode() + b"\n")
    before = answers(run_dir)
    out = resume(tmp_path, archive)
    assert_one_line(out, 2, needle, UNCHANGED)
    assert answers(run_dir) == before


def test_a_damaged_middle_line_is_refused_by_line_number_and_nothing_changes(tmp_path):
    archive, run_dir = finished_run(tmp_path)
    lines = interrupted(run_dir, 4)
    lines[1] = b'{"id": "rad_0003", "status": "answ\n'
    (run_dir / "responses.jsonl").write_bytes(b"".join(lines))
    before = answers(run_dir)
    out = resume(tmp_path, archive)
    assert_one_line(out, 2, "responses.jsonl:2")
    assert answers(run_dir) == before


def test_a_torn_last_line_is_asked_again_and_every_other_answer_is_kept_byte_for_byte(tmp_path):
    archive, run_dir = finished_run(tmp_path)
    lines = interrupted(run_dir, 5)
    (run_dir / "responses.jsonl").write_bytes(b"".join(lines[:4]) + lines[4][:40])
    out = resume(tmp_path, archive)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    after = (run_dir / "responses.jsonl").read_bytes().splitlines(keepends=True)
    assert all(line in after for line in lines[:4]) and len(after) == 11


def test_a_corrupt_config_json_is_refused_by_name_and_nothing_changes(tmp_path):
    archive, run_dir = finished_run(tmp_path)
    interrupted(run_dir, 4)
    (run_dir / "config.json").write_text('{"benchmark": "AcousticBench", "spec": {')
    before = answers(run_dir)
    out = resume(tmp_path, archive)
    assert_one_line(out, 2, "config.json", "restore it from a copy")
    assert answers(run_dir) == before
