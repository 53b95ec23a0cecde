"""`acousticbench serve` as typed functions: serve_model() hands back the served model (its URL, the export line the
command prints, stop(); a context manager that stops what it started), and the dry run's plan, the machine check
and every model's status come back as the lines the command prints. None of them prints anything."""
from __future__ import annotations

import sys

import pytest

import acousticbench
from acousticbench.models.health import health_status
from acousticbench.models.local_server import free_port
from harness_cli import harness_env, needs, python


def serve_cli(*args: str, home, **env: str):
    return python("-m", "acousticbench", "serve", *args, env=harness_env(HOME=str(home), **env))


def test_the_plan_and_the_model_list_are_the_lines_the_command_prints(home, capfd):
    plan = acousticbench.serve_plan("voxtral_mini_3b", port=8123)
    local = acousticbench.serve_plan("tiny_qwen2_audio", local=True)
    assert capfd.readouterr() == ("", "")
    assert plan.lines[-1] == "export ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=http://localhost:8123"
    assert "REDACTED" in "\n".join(plan.lines)  # the token planted in HOME is never shown
    printed = serve_cli("voxtral_mini_3b", "--dry-run", "--port", "8123", home=home)
    assert (printed.returncode, printed.stdout) == (0, "\n".join(plan.lines) + "\n")
    printed = serve_cli("tiny_qwen2_audio", "--local", "--dry-run", home=home)
    assert (printed.returncode, printed.stdout) == (0, "\n".join(local.lines) + "\n")
    with pytest.raises(TypeError, match="unknown serving option.*colour"):
        acousticbench.serve_plan("voxtral_mini_3b", colour="red")


def test_without_an_engine_the_list_and_the_check_say_so_in_their_lines(home, capfd, monkeypatch):
    nowhere = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    monkeypatch.setenv("DOCKER_HOST", nowhere)
    listed, checked = acousticbench.served_models(), acousticbench.serve_check("voxtral_mini_3b")
    assert capfd.readouterr() == ("", "")
    assert listed.lines[0].startswith("serve name")
    assert listed.lines[-1].startswith("status unknown: engine not reachable")
    assert not checked.ok and checked.lines[0].startswith("problem: ")
    printed = serve_cli("--list", home=home, DOCKER_HOST=nowhere)
    assert (printed.returncode, printed.stdout) == (0, "\n".join(listed.lines) + "\n")
    printed = serve_cli("voxtral_mini_3b", "--check", home=home, DOCKER_HOST=nowhere)
    assert (printed.returncode, printed.stdout) == (1, "\n".join(checked.lines) + "\n")


@needs("torch", "fastapi")
@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_serve_hands_back_a_running_server_that_it_stops_on_leaving_the_block(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("ACOUSTICBENCH_CACHE_DIR", str(tmp_path / "cache"))
    port = free_port()
    with acousticbench.serve_model("tiny_qwen2_audio", local=True, port=port, wait=240) as served:
        assert capfd.readouterr() == ("", "")  # its progress went to the (silent) reporter
        assert served.started and served.url == f"http://localhost:{port}"
        assert served.export_line == f"export ACOUSTICBENCH_TINY_QWEN2_AUDIO_ENDPOINT={served.url}"
        assert health_status(f"http://127.0.0.1:{port}") == 200
        again = serve_cli("tiny_qwen2_audio", "--local", "--port", str(port), home=tmp_path,
                          ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"), PYTHON=sys.executable)
        assert again.returncode == 0 and again.stdout == served.export_line + "\n"  # the command prints the same
        assert "already running without Docker" in again.stderr
    assert health_status(f"http://127.0.0.1:{port}") is None
