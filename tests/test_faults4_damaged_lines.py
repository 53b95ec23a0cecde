"""One damaged line in one run: every reading tool copes the same way, naming the file and line (the leaderboard and
the report leave that run out and go on; compare, which reads just the two runs it is given, refuses with one line),
and a complete line that is damaged, not UTF-8 say, is never mistaken for the line a kill cut short (which is asked
again): nothing is dropped or re-asked in its place."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import write_tiny_pack
from harness_cli import assert_one_line, harness_env, python, run_cli, run_dirs
from servers.fixtures import records
from test_faults import RUN


def two_seeds(tmp_path: Path) -> tuple[Path, Path]:
    archive = write_tiny_pack(tmp_path / "archive")
    for seed in ("42", "43"):
        assert run_cli(*RUN, "--archive", str(archive), "--seed", seed, cwd=tmp_path).returncode == 0
    first, second = run_dirs(tmp_path / "results")
    return first, second


def damage(run_dir: Path, lineno: int, line: bytes) -> Path:
    path = run_dir / "responses.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[lineno - 1] = line
    path.write_bytes(b"".join(lines))
    return path


def acousticbench(tmp_path: Path, *args: str):
    return python("-m", "acousticbench", *args, cwd=tmp_path, env=harness_env())


def test_the_report_leaves_out_a_run_with_a_damaged_middle_line_naming_it(tmp_path):
    damaged, intact = two_seeds(tmp_path)
    damage(damaged, 3, b'{"id": "rad_0004", "status": "answ\n')
    out = acousticbench(tmp_path, "report", "results", "--out", str(tmp_path / "report.html"))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert f"{damaged.name}/responses.jsonl:3" in out.stderr and "(1 runs, 11 answers" in out.stdout, out.stdout


def test_the_leaderboard_leaves_out_a_run_with_a_damaged_middle_line_naming_it(tmp_path):
    damaged, intact = two_seeds(tmp_path)
    damage(damaged, 3, b'{"id": "rad_0004", "status": "answ\n')
    out = acousticbench(tmp_path, "leaderboard", "results")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert f"{damaged.name}/responses.jsonl:3 is not a record (damaged): the run is left out" in out.stderr
    assert "| Oracle |" in out.stdout, out.stdout


def test_the_report_leaves_out_a_run_whose_middle_record_does_not_validate(tmp_path):
    damaged, intact = two_seeds(tmp_path)
    record = json.loads((damaged / "responses.jsonl").read_text().splitlines()[4])
    damage(damaged, 5, json.dumps({**record, "seed": "forty-two"}).encode() + b"\n")
    out = acousticbench(tmp_path, "report", "results", "--out", str(tmp_path / "report.html"))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert f"{damaged.name}/responses.jsonl:5" in out.stderr and "(1 runs, 11 answers" in out.stdout, out.stdout


def test_compare_refuses_a_complete_last_line_that_is_not_utf8(tmp_path):
    first, second = two_seeds(tmp_path)
    last = (second / "responses.jsonl").read_bytes().splitlines(keepends=True)[-1]
    damage(second, 11, last.replace(b'"response":"', b'"response":"\xe9 '))
    out = acousticbench(tmp_path, "compare", str(first), str(second))
    assert_one_line(out, 2, "responses.jsonl:11", "not UTF-8")


def test_compare_refuses_a_file_in_another_encoding(tmp_path):
    first, second = two_seeds(tmp_path)
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes((second / "responses.jsonl").read_bytes().replace(b'"response":"', b'"response":"\xe9'))
    shutil.copy(second / "config.json", tmp_path / "config.json")
    out = acousticbench(tmp_path, "compare", str(first), str(latin))
    assert_one_line(out, 2, "latin1.jsonl:1", "not UTF-8")


def five_lines_left(tmp_path: Path) -> tuple[Path, Path, list[bytes]]:
    """A finished run cut back to an interrupted one: metrics.json gone, the first five lines of its answers."""
    archive = write_tiny_pack(tmp_path / "archive")
    assert run_cli(*RUN, "--archive", str(archive), cwd=tmp_path).returncode == 0
    (run_dir,) = run_dirs(tmp_path / "results")
    (run_dir / "metrics.json").unlink()
    path = run_dir / "responses.jsonl"
    return archive, path, path.read_bytes().splitlines(keepends=True)[:5]


def test_resume_refuses_a_damaged_complete_last_line_instead_of_asking_it_again(tmp_path):
    archive, path, lines = five_lines_left(tmp_path)
    lines[4] = lines[4].replace(b'"response":"', b'"response":"\xe9 ')  # an answer, whole, in another encoding
    path.write_bytes(b"".join(lines))
    out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path)
    assert_one_line(out, 2, "responses.jsonl:5", "not UTF-8")
    assert path.read_bytes() == b"".join(lines)


def test_a_last_line_a_kill_cut_short_is_still_asked_again(tmp_path):
    archive, path, lines = five_lines_left(tmp_path)
    path.write_bytes(b"".join(lines[:4]) + lines[4][:-30])  # cut mid-line, no newline: what a kill leaves
    out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path)
    assert out.returncode == 0 and "4 kept from the earlier run" in out.stdout, out.stdout + out.stderr
    assert len(records(path.parent)) == 11


def test_compare_refuses_a_config_json_that_is_not_utf8(tmp_path):
    first, second = two_seeds(tmp_path)
    config = second / "config.json"
    config.write_bytes(config.read_text().encode("utf-16"))  # valid JSON to a decoder that guesses encodings
    out = acousticbench(tmp_path, "compare", str(first), str(second))
    assert_one_line(out, 2, f"{second.name}/config.json", "restore it from a copy")
