"""Bad inputs and faults as a user meets them: each ends with its documented exit code and one line on stderr (no
traceback), and changes no file that existed before."""
from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from acousticbench.benchmarks.acoustic.pack import load_questions, write_manifest, write_questions
from conftest import REPO, write_tiny_pack
from harness_cli import assert_one_line, harness_env, python, run_cli, run_dirs, script
from servers import openai_server
from servers.fixtures import question_keys
from servers.local import FaultPlan

VARIABLE = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


def reseal(archive: Path, task: str, change) -> None:
    """A self-consistent third-party pack: questions changed by `change`, then sealed and pinned again."""
    questions = [change(q) for q in load_questions(archive, task)]
    digest = write_questions(archive, task, [q.sealed() for q in questions])
    manifest = json.loads((archive / "MANIFEST.json").read_text())
    write_manifest(archive, manifest["benchmark"], manifest["version"], manifest["tasks"],
                   {**manifest["sha256"], f"{task}/questions.jsonl": digest})


def flip_answer(archive: Path) -> None:
    path = archive / "rad" / "questions.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace('"answer":"A"', '"answer":"B"') if '"answer":"A"' in lines[2] else \
        lines[2].replace('"answer":"B"', '"answer":"A"')
    path.write_text("\n".join(lines) + "\n")


def truncate_wav(archive: Path) -> None:
    wav = archive / "rad" / "audio" / "rad_0004_1.wav"
    wav.write_bytes(wav.read_bytes()[:60])


def text_as_wav(archive: Path) -> None:
    (archive / "rad" / "audio" / "rad_0004_1.wav").write_text("not audio at all\n")


def path_outside(archive: Path) -> None:
    reseal(archive, "rad", lambda q: q if q.id != "rad_0003" else q.model_copy(update={
        "audio": ["../../etc/hostname", q.audio[1]], "sha256": {**q.sha256, "../../etc/hostname": "0" * 64}}))


def absolute_path(archive: Path) -> None:
    reseal(archive, "rad", lambda q: q if q.id != "rad_0003" else q.model_copy(update={
        "audio": ["/etc/hostname", q.audio[1]], "sha256": {**q.sha256, "/etc/hostname": "0" * 64}}))


def link_outside(archive: Path) -> None:
    outside = archive.parent / "elsewhere.wav"
    clip = archive / "rad" / "audio" / "rad_0003_1.wav"
    outside.write_bytes(clip.read_bytes())
    clip.unlink()
    clip.symlink_to(outside)  # same bytes, same sha256: only where it leads is wrong


def not_utf8(archive: Path) -> None:
    path = archive / "rad" / "questions.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[4] = lines[4].replace(b"two audio", b"two \xff audio")
    path.write_bytes(b"\n".join(lines))


RUN = ("--model", "Oracle", "--task", "rad", "--judge", "rules")
PACK_FAULTS = {
    "flipped answer": (flip_answer, ("question rad_0003", "was changed after the pack was built")),
    "truncated wav": (truncate_wav, ("question rad_0004", "rad_0004_1.wav", "differs from the one the pack was built")),
    "text named .wav": (text_as_wav, ("question rad_0004", "rad_0004_1.wav")),
    "path with ..": (path_outside, ("question rad_0003", "'../../etc/hostname' is a path with '..'")),
    "absolute path": (absolute_path, ("question rad_0003", "'/etc/hostname' is an absolute path")),
    "link leading out": (link_outside, ("question rad_0003", "a link that leads outside the pack")),
    "not utf-8": (not_utf8, ("questions.jsonl:5 (question rad_0005)", "is not UTF-8")),
}


@pytest.mark.parametrize("case", list(PACK_FAULTS))
def test_a_damaged_or_escaping_pack_is_refused_before_the_run(case, tmp_path):
    damage, needles = PACK_FAULTS[case]
    archive = write_tiny_pack(tmp_path / "archive")
    damage(archive)
    before = snapshot(tmp_path)
    out = run_cli(*RUN, "--archive", str(archive), cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, *needles)
    assert snapshot(tmp_path) == before and not (tmp_path / "results").exists()


def test_verify_checksums_names_a_question_that_is_not_utf8(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    not_utf8(archive)
    out = run_cli("--verify-checksums", "--task", "rad", "--archive", str(archive), cwd=tmp_path, env=harness_env())
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "rad_0005: rad/questions.jsonl: line 5: byte" in out.stdout and "is not UTF-8" in out.stdout


def test_an_audioicl_episode_path_leading_out_is_refused(tmp_path):
    from audioicl_pack import reduced_pack

    meta = tmp_path / "meta"
    meta.mkdir()
    lines = (reduced_pack() / "audioicl" / "meta" / "meta_k1.jsonl").read_text().splitlines()
    episode = json.loads(lines[0])
    episode["query"]["audio_path"] = "../../../etc/hostname"
    (meta / "meta_k1.jsonl").write_text(json.dumps(episode) + "\n")
    out = run_cli("--model", "Oracle", "--task", episode["task"], "--shots", "1", "--icl-meta", str(meta), "--icl-base",
                  str(reduced_pack() / "audioicl"), cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, f"episode {episode['id']}", "is a path with '..'")


def results_with_a_run(tmp_path: Path) -> tuple[Path, Path]:
    archive = write_tiny_pack(tmp_path / "archive")
    assert run_cli(*RUN, "--archive", str(archive), cwd=tmp_path, env=harness_env()).returncode == 0
    (run_dir,) = run_dirs(tmp_path / "results")
    return archive, run_dir


def test_binary_run_files_are_one_line_in_every_tool(tmp_path):
    archive, run_dir = results_with_a_run(tmp_path)
    (run_dir / "responses.jsonl").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe binary\n" * 3)
    before = snapshot(tmp_path)
    for out in (script("compare_runs.py", str(run_dir), str(run_dir), cwd=tmp_path),
                script("rejudge.py", str(run_dir), "--judge-endpoint", "http://127.0.0.1:9/v1", cwd=tmp_path),
                script("rerun_nones.py", "--model", "Oracle", str(run_dir), cwd=tmp_path),
                run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path, env=harness_env())):
        assert_one_line(out, 2, "responses.jsonl")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("argv, needle", [
    (("--build-archive", "--archive", "{file}/archive"), "cannot write to the folder of --archive"),
    (("--extract", "{file}", "--archive", "{file}/archive"), "cannot write to the folder of --archive"),
    (("--model", "Oracle", "--task", "rad", "--archive", "{archive}", "--results-dir", "{file}/results"),
     "cannot write to results folder"),
    (("--model", "Oracle", "--task", "", "--archive", "{archive}"), "--task '' names no task"),
    (("--model", "Oracle", "--task", ",", "--archive", "{archive}"), "--task ',' names no task"),
    (("--model", ",", "--task", "rad", "--archive", "{archive}"), "--model ',' names no model"),
])
def test_unwritable_places_and_empty_names_are_one_line(argv, needle, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("a regular file, so nothing can be made under it\n")
    archive = write_tiny_pack(tmp_path / "archive")
    before = snapshot(tmp_path)
    out = run_cli(*[a.format(file=blocker, archive=archive) for a in argv], cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, needle)
    assert snapshot(tmp_path) == before


def test_eval_str_into_an_unwritable_place(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x\n")
    out = script("eval_str.py", "--in", str(tmp_path), "--out", str(blocker / "summary.csv"), cwd=tmp_path)
    assert_one_line(out, 2, "cannot write to the folder of")


def test_plot_without_matplotlib_is_refused_before_any_run(tmp_path):
    from audioicl_pack import reduced_pack

    code = ("import sys; sys.modules['matplotlib'] = None; from acousticbench.cli import main; "
            f"sys.exit(main(['--model', 'Oracle', '--task', 'AudioCount', '--shots', '1', '--plot', 'p.png', "
            f"'--archive', {str(reduced_pack())!r}]))")
    out = python("-c", code, cwd=tmp_path)
    assert_one_line(out, 2, "--plot needs matplotlib")
    assert not (tmp_path / "results").exists()


def test_a_second_run_on_the_same_folder_refuses(tmp_path):
    import fcntl

    archive, run_dir = results_with_a_run(tmp_path)
    with (run_dir / ".lock").open("a+") as held:  # what a first run.py --resume holds while it writes
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, f"{run_dir.name} is being written by another process")


def mount_tmpfs(path: Path, size: str) -> None:
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()})")


def test_a_full_disk_is_one_line_and_resume_finishes_the_run(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 200)
    results = tmp_path / "results"
    mount_tmpfs(results, "48k")
    try:
        out = run_cli(*RUN, "--archive", str(archive), "--results-dir", str(results), cwd=tmp_path, env=harness_env())
        assert_one_line(out, 2, "no space left on the device", "--resume")
        subprocess.run(["mount", "-o", "remount,size=4m", str(results)], check=True)
        out = run_cli(*RUN, "--archive", str(archive), "--results-dir", str(results), "--resume", cwd=tmp_path,
                      env=harness_env())
        assert out.returncode == 0, out.stderr
        (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
        ids = [json.loads(line)["id"] for line in (run_dir / "responses.jsonl").read_text().splitlines()]
        assert ids == sorted(set(ids)) and len(ids) == 203  # every question once
    finally:
        subprocess.run(["umount", str(results)], check=False)


def test_a_read_only_results_folder_on_resume_and_for_rerun(tmp_path):
    archive, run_dir = results_with_a_run(tmp_path)
    results = tmp_path / "results"
    done = subprocess.run(["mount", "--bind", "-o", "ro", str(results), str(results)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount read-only here ({done.stderr.decode().strip()})")
    try:
        before = snapshot(tmp_path)
        out = run_cli(*RUN, "--archive", str(archive), "--resume", cwd=tmp_path, env=harness_env())
        assert_one_line(out, 2, "cannot write to")
        out = script("rerun_nones.py", "--model", "Oracle", str(run_dir), cwd=tmp_path)
        assert_one_line(out, 2, "responses.jsonl.orig")
        assert snapshot(tmp_path) == before
    finally:
        subprocess.run(["umount", str(results)], check=False)


def test_a_server_failing_3_percent_for_good_lets_the_run_finish(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 472)  # 475 questions with the three diagnostics
    keys = question_keys(archive)
    broken = {key: ["400"] for i, key in enumerate(sorted(keys.values())) if i % 33 == 0}  # ~3% fail for good
    plan = FaultPlan(rate=0.2, kinds=("500", "503", "429"), by_key=broken)
    with openai_server.serve(plan) as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--split", "all", "--concurrency", "16",
                      "--judge", "rules", "--archive", str(archive), cwd=tmp_path,
                      env=harness_env(**{VARIABLE: server.url}), timeout=300)
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    records = [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    errors = [r for r in records if r["status"] == "error"]
    assert len(records) == 475 and len(errors) == len(broken) and all("HTTP 400" in r["error"] for r in errors)


def test_a_server_failing_every_request_stops_the_run_within_40_questions(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 472)
    with openai_server.serve(FaultPlan(always="400")) as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--concurrency", "16", "--judge", "rules",
                      "--archive", str(archive), cwd=tmp_path, env=harness_env(**{VARIABLE: server.url}))
    assert_one_line(out, 1, "stopped: 10 of 10 questions failed", "over --max-error-rate 10%")
    (run_dir,) = run_dirs(tmp_path / "results")
    assert len((run_dir / "responses.jsonl").read_text().splitlines()) <= 40



def test_judge_extract_on_a_binary_file_is_one_line(tmp_path):
    binary = tmp_path / "answers.jsonl"
    binary.write_bytes(b"\xff\xfe" + bytes(range(256)) * 4)
    out = python("-m", "acousticbench.benchmarks.acoustic.judge", "extract", str(binary), "--rules-only", cwd=REPO)
    assert_one_line(out, 2, "answers.jsonl:1", "is not UTF-8")


def test_damage_after_a_checked_run_is_still_caught(tmp_path):
    """The pack check remembers files it verified (by size, mtime and inode); a file changed since is hashed again."""
    archive = write_tiny_pack(tmp_path / "archive")
    assert run_cli(*RUN, "--archive", str(archive), cwd=tmp_path, env=harness_env()).returncode == 0
    wav = archive / "rad" / "audio" / "rad_0004_1.wav"
    data = bytearray(wav.read_bytes())
    data[-1] ^= 0xFF  # the same size, one sample changed
    wav.write_bytes(bytes(data))
    out = run_cli(*RUN, "--archive", str(archive), "--results-dir", "again", cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, "question rad_0004", "differs from the one the pack was built with")


def test_a_run_stopped_on_a_question_that_succeeded_names_the_last_error(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 20)
    keys = question_keys(archive)
    first_nine = sorted(keys)[:9]  # asked in id order one at a time: the 10th, which succeeds, trips the budget
    with openai_server.serve(FaultPlan(by_key={keys[qid]: ["400"] for qid in first_nine})) as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--concurrency", "1", "--judge", "rules",
                      "--archive", str(archive), cwd=tmp_path, env=harness_env(**{VARIABLE: server.url}))
    assert_one_line(out, 1, "stopped: 9 of 10 questions failed", "last error: Voxtral-Mini-3B at", "HTTP 400")
    assert "last error: None" not in out.stderr
