"""Bad input: one clear line naming the fix, exit code 2, and nothing overwritten."""
from __future__ import annotations

from harness_cli import assert_one_line, run_cli


def assert_user_error(out, *needles: str) -> None:
    assert_one_line(out, 2, *needles)


def test_unknown_model_and_task_suggest_close_names(tmp_path):
    assert_user_error(run_cli("--model", "oracle", cwd=tmp_path), "unknown model 'oracle'", "Oracle")
    assert_user_error(run_cli("--model", "Oracle", "--task", "rd", cwd=tmp_path), "unknown task 'rd'", "rad")


def test_missing_archive_says_how_to_build_it(tmp_path):
    assert_user_error(run_cli("--model", "Oracle", "--task", "rad", cwd=tmp_path), "--build-archive", "--extract")


def test_bad_max_samples(tmp_path):
    for value in ("0", "-3", "ten"):
        assert_user_error(run_cli("--model", "Oracle", "--max-samples", value, cwd=tmp_path), "--max-samples")


def test_malformed_question_line_names_file_and_line(tiny_pack, tmp_path):
    path = tiny_pack / "rad" / "questions.jsonl"
    content = path.read_text().splitlines()
    content[2] = content[2].replace('"split":"train"', '"split":"test"')
    path.write_text("\n".join(content) + "\n")
    out = run_cli("--model", "Always-A", "--task", "rad", "--archive", str(tiny_pack), cwd=tmp_path)
    assert_user_error(out, "questions.jsonl:3", "split")
    assert not (tmp_path / "results").exists()


def test_missing_audio_file(tiny_pack, tmp_path):
    (tiny_pack / "rad" / "audio" / "rad_0002_1.wav").unlink()
    out = run_cli("--model", "Always-A", "--task", "rad", "--archive", str(tiny_pack), cwd=tmp_path)
    assert_user_error(out, "question rad_0002: audio file", "rad_0002_1.wav is missing or unreadable")


def test_unreadable_wav(tiny_pack, tmp_path):
    (tiny_pack / "rad" / "audio" / "rad_0001_2.wav").write_bytes(b"RIFF not really a wav")
    out = run_cli("--model", "Oracle", "--task", "rad", "--max-samples", "1", "--archive", str(tiny_pack), cwd=tmp_path)
    assert_user_error(out, "question rad_0001: audio file", "rad_0001_2.wav differs from the one the pack was built with")


def test_results_dir_not_writable(tiny_pack, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = run_cli("--model", "Always-A", "--task", "rad", "--archive", str(tiny_pack),
                  "--results-dir", str(blocker / "results"), cwd=tmp_path)
    assert_user_error(out, "cannot write to results folder", "--results-dir")
    assert blocker.read_text() == "not a folder"
