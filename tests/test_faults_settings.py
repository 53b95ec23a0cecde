"""Settings that cannot work are one line before anything starts (exit 2, no traceback, no file made or changed):
URLs, ports, seeds, keys and other header values, and the .env file."""
from __future__ import annotations

import pytest

from conftest import write_tiny_pack
from servers import openai_server
from harness_cli import harness_env, run_cli
from test_faults import RUN, VARIABLE, assert_one_line, snapshot

VOXTRAL = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules")
CASES = {  # name: (extra flags, environment, what the line names)
    "IPv6 bracket open": (("--endpoint", "http://[::1/v1"), {}, "--endpoint='http://[::1/v1' is not a valid URL"),
    "port out of range": ((), {VARIABLE: "http://127.0.0.1:99999/v1"}, f"{VARIABLE}='http://127.0.0.1:99999/v1' is not"),
    "port zero": ((), {VARIABLE: "http://127.0.0.1:0"}, "names port 0"),
    "no scheme": (("--judge-endpoint", "127.0.0.1:8000"), {}, "--judge-endpoint='127.0.0.1:8000' is not an http(s)"),
    "seed over 64 bits": (("--seed", str(2**64)), {}, f"--seed {2**64} is outside 0..2147483647"),
    "seed over int32": (("--seeds", f"42,{2**31}"), {}, f"--seed {2**31} is outside"),
    "negative seed": (("--seed", "-1"), {}, "--seed -1 is outside"),
    "key with a newline": ((), {"ACOUSTICBENCH_VOXTRAL_MINI_3B_API_KEY": "abc\ndef"},
                           "ACOUSTICBENCH_VOXTRAL_MINI_3B_API_KEY holds a line break at character 4"),
    "key ending in a newline": ((), {"OPENAI_API_KEY": "sk-test-0123456789\n"}, "OPENAI_API_KEY holds a line break"),
    "key not ASCII": ((), {"OPENAI_API_KEY": "sk-tést"}, "OPENAI_API_KEY holds a character that is not ASCII"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_setting_that_cannot_work_is_one_line_before_anything_starts(case, tmp_path):
    flags, env, needle = CASES[case]
    archive = write_tiny_pack(tmp_path / "archive")
    before = snapshot(tmp_path)
    # no wait for a server that cannot be there: one would outlast run_cli's timeout (no stopwatch, which load skews)
    out = run_cli(*VOXTRAL, "--archive", str(archive), *flags, cwd=tmp_path,
                  env=harness_env(**env, ACOUSTICBENCH_CONNECT_WAIT="3600"))
    assert_one_line(out, 2, needle)
    assert snapshot(tmp_path) == before and not (tmp_path / "results").exists()


NUMBERS = {  # a number from the environment that means no count, wait or limit
    "attempts not a number": ("ACOUSTICBENCH_MAX_ATTEMPTS", "nan", "'nan' is not a whole number"),
    "attempts infinite": ("ACOUSTICBENCH_MAX_ATTEMPTS", "inf", "'inf' is not a whole number"),
    "attempts a fraction": ("ACOUSTICBENCH_MAX_ATTEMPTS", "2.5", "'2.5' is not a whole number"),
    "timeout infinite": ("ACOUSTICBENCH_REQUEST_TIMEOUT", "inf", "'inf' is not a finite number"),
    "delay not a number": ("ACOUSTICBENCH_RETRY_BASE_DELAY", "nan", "'nan' is not a finite number"),
}


@pytest.mark.parametrize("case", list(NUMBERS))
def test_a_number_in_the_environment_that_means_nothing_is_one_line(case, tmp_path):
    variable, value, needle = NUMBERS[case]
    archive = write_tiny_pack(tmp_path / "archive")
    before = snapshot(tmp_path)
    out = run_cli(*RUN, "--archive", str(archive), cwd=tmp_path, env=harness_env(**{variable: value}))
    assert_one_line(out, 2, f"{variable}={needle}")
    assert snapshot(tmp_path) == before and not (tmp_path / "results").exists()


DOTENV = {
    "an unclosed quote": ('OPENAI_API_KEY="sk-abc\nACOUSTICBENCH_MAX_ATTEMPTS=2\n', ".env:1: cannot be read as NAME=value"),
    "a value spanning lines": ('X=1\nOPENAI_API_KEY="sk-abc\ndef"\n', ".env:2: the value of OPENAI_API_KEY spans lines"),
}


@pytest.mark.parametrize("case", list(DOTENV))
def test_a_dotenv_line_that_cannot_be_read_is_named(case, tmp_path):
    text, needle = DOTENV[case]
    archive = write_tiny_pack(tmp_path / "archive")
    (tmp_path / ".env").write_text(text)
    before = snapshot(tmp_path)
    out = run_cli(*RUN, "--archive", str(archive), cwd=tmp_path, env=harness_env())
    assert_one_line(out, 2, needle)
    assert snapshot(tmp_path) == before and not (tmp_path / "results").exists()


def test_a_good_dotenv_is_loaded_and_the_environment_wins(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 8)
    with openai_server.serve() as server:
        (tmp_path / ".env").write_text(f"# served here\n{VARIABLE}=http://127.0.0.1:9/v1\nA_NAME='a value'\n")
        out = run_cli(*VOXTRAL, "--archive", str(archive), "--max-samples", "2", cwd=tmp_path,
                      env=harness_env(**{VARIABLE: server.url}))
    assert out.returncode == 0, out.stderr  # the real variable, not .env's dead port, was used
