"""The edges of the newest features, as a user meets them from the command line: a registry folder that does not exist
or vanishes mid-run is named at once, never waited on in silence; a registry file whose URL no client can use (a port
that is no number, an IPv6 literal left open) is left out with a line naming it; a plugin that fails on import is one
line naming it."""
from __future__ import annotations

import json
import threading
import time

import pytest

from conftest import write_tiny_pack
from harness_cli import assert_one_line, harness_env, run_cli, run_dirs
from servers import openai_server
from servers.fixtures import records

VOXTRAL = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules")
WAIT = {"ACOUSTICBENCH_REPLICA_WAIT": "600", "ACOUSTICBENCH_REGISTRY_POLL": "0.05"}  # a user's wait: never reached


def register(registry, key: str, url: str) -> None:
    folder = registry / "voxtral_mini_3b"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{key}.json").write_text(json.dumps({"url": url, "job": key, "node": "here"}))


def test_a_registry_folder_that_does_not_exist_is_named_at_once(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    started = time.monotonic()
    out = run_cli(*VOXTRAL, "--archive", str(archive), "--endpoints-from", str(tmp_path / "no-such-registry"),
                  cwd=tmp_path, env=harness_env(**WAIT), timeout=60)
    assert_one_line(out, 2, str(tmp_path / "no-such-registry"), "--endpoints-from")
    assert time.monotonic() - started < 60 and not (tmp_path / "results").exists()


def test_a_registry_named_by_the_environment_that_does_not_exist_names_the_variable(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    out = run_cli(*VOXTRAL, "--archive", str(archive), cwd=tmp_path, timeout=60,
                  env=harness_env(**WAIT, ACOUSTICBENCH_ENDPOINTS_FROM=str(tmp_path / "gone")))
    assert_one_line(out, 2, str(tmp_path / "gone"), "ACOUSTICBENCH_ENDPOINTS_FROM")


def test_a_registry_folder_that_vanishes_mid_run_is_named_at_once(tmp_path):
    import shutil

    archive = write_tiny_pack(tmp_path / "archive", "rad", 40)
    registry = tmp_path / "registry"
    with openai_server.serve(delay_s=0.2) as server:
        register(registry, "job-1", server.url)

        def vanish() -> None:
            while len(server.received) < 6:
                time.sleep(0.02)
            shutil.rmtree(registry)
        threading.Thread(target=vanish, daemon=True).start()
        out = run_cli(*VOXTRAL, "--archive", str(archive), "--endpoints-from", str(registry), "--concurrency", "2",
                      cwd=tmp_path, env=harness_env(**WAIT), timeout=60)
    assert out.returncode in (1, 2) and "Traceback" not in out.stderr, out.stderr
    assert str(registry) in out.stderr and "removed" in out.stderr, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    rows = records(run_dir)
    assert len({r["id"] for r in rows}) == len(rows)  # nothing doubled; what was answered is kept
    assert all(r["status"] in ("answered", "error") for r in rows)


URLS = {"a port that is no number": "http://127.0.0.1:80a0", "an IPv6 literal left open": "http://[::1:8000",
        "no host": "http://:8000", "not http": "ftp://127.0.0.1:21", "not a string": 8000}


@pytest.mark.parametrize("url", URLS.values(), ids=URLS.keys())
def test_a_registry_file_whose_url_no_client_can_use_is_left_out_and_named(url, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    registry = tmp_path / "registry"
    with openai_server.serve() as server:
        register(registry, "job-bad", url)
        register(registry, "job-good", server.url)
        out = run_cli(*VOXTRAL, "--max-samples", "3", "--archive", str(archive), "--endpoints-from", str(registry),
                      cwd=tmp_path, env=harness_env(**WAIT), timeout=60)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "job-bad.json" in out.stderr, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    assert [r["status"] for r in records(run_dir)] == ["answered"] * 3


@pytest.mark.parametrize("url", list(URLS.values())[:2], ids=list(URLS)[:2])
def test_a_registry_holding_only_an_unusable_url_says_so_before_the_wait_ends(url, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    registry = tmp_path / "registry"
    register(registry, "job-bad", url)
    out = run_cli(*VOXTRAL, "--archive", str(archive), "--endpoints-from", str(registry), cwd=tmp_path, timeout=60,
                  env=harness_env(**{**WAIT, "ACOUSTICBENCH_REPLICA_WAIT": "1"}))
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert "job-bad.json" in out.stderr and "ACOUSTICBENCH_REPLICA_WAIT" in out.stderr, out.stderr


PLUGINS = {"raises": "raise RuntimeError('the plugin broke\\non two lines')", "syntax": "def (:",
           "exits": "raise SystemExit(3)", "divides": "1 / 0"}


@pytest.mark.parametrize("body", PLUGINS.values(), ids=PLUGINS.keys())
def test_a_plugin_that_fails_on_import_is_one_line_naming_it(body, tmp_path):
    (tmp_path / "broken_plugin.py").write_text(body + "\n")
    path = f"{tmp_path}:{harness_env().get('PYTHONPATH', '')}"
    out = run_cli("--list-models", cwd=tmp_path,
                  env=harness_env(ACOUSTICBENCH_PLUGINS="broken_plugin", PYTHONPATH=path))
    assert_one_line(out, 2, "ACOUSTICBENCH_PLUGINS", "broken_plugin")
