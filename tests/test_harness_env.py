"""No provider key from the developer's shell reaches a test: not a harness subprocess, not an in-process test (live
tests excepted), so a `--judge auto` run can never send a paid probe with the developer's own key."""
from __future__ import annotations

import json
import subprocess

from harness_cli import CACHE, FAST, PROVIDER_VARIABLES, REPO, harness_env, python, run_cli, run_dirs, start_python
from servers import openai_server

pytest_plugins = ["pytester"]

SHELL = {**{name: f"fake-{name.lower()}" for name in PROVIDER_VARIABLES},
         "ACOUSTICBENCH_JUDGE_ENDPOINT": "http://127.0.0.1:9/v1", "ACOUSTICBENCH_PRICES": "/nowhere.json"}
SEEN = ("import json, os; print(json.dumps({k: v for k, v in os.environ.items() "
        "if k.startswith(('OPENAI_', 'GEMINI_', 'GOOGLE_', 'HF_', 'HUGGING_FACE_', 'ACOUSTICBENCH_'))}))")


def seen(out: str) -> dict[str, str]:
    """The provider variables a subprocess printed with SEEN, less the short waits and the cache every helper sets."""
    return {k: v for k, v in json.loads(out).items() if k not in FAST and k not in CACHE}


def test_a_helper_run_subprocess_sees_no_provider_variable_from_the_shell(monkeypatch):
    for name, value in SHELL.items():
        monkeypatch.setenv(name, value)
    assert seen(python("-c", SEEN).stdout) == {}
    background = start_python("-c", SEEN, stdout=subprocess.PIPE, text=True)
    assert seen(background.communicate(timeout=60)[0]) == {}
    # what the test itself passes does reach the subprocess
    assert seen(python("-c", SEEN, env=harness_env(OPENAI_API_KEY="sk-set-by-the-test")).stdout) == {
        "OPENAI_API_KEY": "sk-set-by-the-test"}


def test_judge_auto_does_not_try_a_key_from_the_shell(tiny_pack, tmp_path, monkeypatch):
    """With the shell's key the judge would probe OpenAI before the run and fail here; without it, auto is the rules."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key-from-the-developers-shell")
    with openai_server.serve(answer_text="Hard to say.") as server:
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(tiny_pack), "--max-samples", "3",
                      cwd=tmp_path, env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url,
                                                    ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache")))
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    config = json.loads((run_dir / "config.json").read_text())["judge"]
    assert config["requested"] == "auto" and config["mode"] == "rules" and "rejudge.py" in config["note"]


def test_in_process_tests_see_no_provider_variable_except_live_ones(pytester, monkeypatch):
    """The suite's own conftest in a fresh pytest: its autouse fixture clears the shell's key, live tests keep it."""
    pytester.makeconftest(f"""
        import importlib.util, sys

        sys.path.insert(0, {str(REPO / "tests")!r})
        spec = importlib.util.spec_from_file_location("suite_conftest", {str(REPO / "tests" / "conftest.py")!r})
        suite = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(suite)
        no_provider_keys = suite.no_provider_keys
        """)
    pytester.makepyfile(test_inner="""
        import os
        import pytest

        def test_plain():
            assert "OPENAI_API_KEY" not in os.environ and "ACOUSTICBENCH_PRICES" not in os.environ

        @pytest.mark.live
        def test_live():
            assert os.environ["OPENAI_API_KEY"] == "fake-openai_api_key"
        """)
    for name, value in SHELL.items():
        monkeypatch.setenv(name, value)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-W", "ignore::pytest.PytestUnknownMarkWarning")
    result.assert_outcomes(passed=2)


def test_the_harness_keeps_its_cache_in_the_test_runs_own_folder(tiny_pack, tmp_path):
    """Not in the developer's ~/.cache/acousticbench: the pack check's record of this temporary pack lands in the test
    run's cache folder."""
    from pathlib import Path

    out = run_cli("--model", "Oracle", "--task", "rad", "--archive", str(tiny_pack), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    records = (Path(CACHE["ACOUSTICBENCH_CACHE_DIR"]) / "verified").glob("*.json")
    assert any(str(tiny_pack.resolve()) in record.read_text() for record in records)
