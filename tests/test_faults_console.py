"""Output to a console that cannot print every character (an ASCII-only encoding, the C locale): every command
prints what it can in plain ASCII (± as +/-), and exits as it would anywhere else, never with a traceback."""
from __future__ import annotations

import pytest

from conftest import write_tiny_pack
from harness_cli import harness_env, python, run_cli

ASCII = {"PYTHONIOENCODING": "ascii"}
C_LOCALE = {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
CONSOLES = {"PYTHONIOENCODING=ascii": ASCII, "the C locale": C_LOCALE}


def runs_over_seeds(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    out = run_cli("--model", "Oracle", "--task", "rad", "--judge", "rules", "--seeds", "42,43", "--archive",
                  str(archive), cwd=tmp_path, env=harness_env())
    assert out.returncode == 0, out.stderr
    return archive


@pytest.mark.parametrize("console", list(CONSOLES))
def test_the_leaderboard_prints_plus_minus_on_an_ascii_console(console, tmp_path):
    runs_over_seeds(tmp_path)
    out = python("-m", "acousticbench", "leaderboard", "results", cwd=tmp_path, env=harness_env(**CONSOLES[console]))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "+/-" in out.stdout and "| Oracle" in out.stdout


@pytest.mark.parametrize("command", [("--list-models",), ("--list-tasks",), ("--help",)])
def test_listings_print_on_an_ascii_console(command, tmp_path):
    out = run_cli(*command, cwd=tmp_path, env=harness_env(**ASCII))
    assert out.returncode == 0 and "Traceback" not in out.stderr and out.stdout.strip(), out.stderr


def test_a_run_and_its_report_under_a_folder_named_in_greek_on_an_ascii_console(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    out = run_cli("--model", "Oracle", "--task", "rad", "--judge", "rules", "--seeds", "42,43", "--archive",
                  str(archive), "--results-dir", "αποτελέσματα", cwd=tmp_path, env=harness_env(**ASCII))
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "Oracle on rad (seed 43): accuracy" in out.stdout and "\\u03b1" in out.stdout
    out = run_cli("--report", "αποτελέσματα", "--out", "r.html", cwd=tmp_path, env=harness_env(**ASCII))
    assert out.returncode == 0 and (tmp_path / "r.html").is_file(), out.stderr


def test_an_error_naming_a_non_ascii_path_is_one_line_on_an_ascii_console(tmp_path):
    out = run_cli("--model", "Oracle", "--task", "rad", "--archive", "Klänge", cwd=tmp_path, env=harness_env(**ASCII))
    assert out.returncode == 2 and "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "Kl\\xe4nge" in out.stderr


def test_an_error_naming_a_path_the_c_locale_cannot_decode_gives_its_bytes_back(tmp_path):
    out = run_cli("--model", "Oracle", "--task", "rad", "--archive", "Klänge", cwd=tmp_path,
                  env=harness_env(**C_LOCALE))
    assert out.returncode == 2 and "Traceback" not in out.stderr and "Klänge" in out.stderr, out.stderr
