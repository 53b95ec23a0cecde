"""docker_serve.sh without a Docker engine: --dry-run for every model, --list, the no-engine message, bad input."""
from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

docker = pytest.importorskip("docker")

from acousticbench.models.local_server import free_port  # noqa: E402
from acousticbench.run.catalog import MODELS  # noqa: E402
from acousticbench.serve import __main__ as cli  # noqa: E402
from acousticbench.serve.specs import SPECS  # noqa: E402
from conftest import HF_TOKEN as TOKEN, REPO  # noqa: E402

SCRIPT = str(REPO / "scripts" / "docker_serve.sh")


def script_env(home, **extra: str) -> dict[str, str]:
    """The script's environment: this interpreter (a worktree has no .venv of its own), nothing else inherited."""
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHON": sys.executable, **extra}


def closed_port() -> int:
    return free_port()  # nothing listens there once the probe socket is closed


def settings_from(stdout: str) -> dict:
    start, end = stdout.index("\n{") + 1, stdout.index("\n}") + 2
    return json.loads(stdout[start:end])


@pytest.mark.parametrize("name", list(SPECS))
def test_dry_run_prints_the_exact_settings_with_the_token_redacted(name, home, capsys):
    spec = SPECS[name]
    assert cli.main([name, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert TOKEN not in out
    s = settings_from(out)
    assert s["image"] == spec.image
    assert s["image"].startswith(("acousticbench/vllm:", "acousticbench/vllm-cpu:", "acousticbench/transformers"))
    assert s["ports"] == {"8000/tcp": ["127.0.0.1", spec.port]}
    assert s["ipc_mode"] == "host" and s["detach"] is True
    assert s["labels"]["acousticbench.model"] == name
    assert s["volumes"][f"{home}/.cache/huggingface"] == {"bind": "/root/.cache/huggingface", "mode": "rw"}
    if spec.kind == "vllm":  # its compile cache survives the container: a second start skips torch.compile
        assert s["volumes"][f"{home}/.cache/vllm"] == {"bind": "/root/.cache/vllm", "mode": "rw"}
    assert s["environment"]["HF_TOKEN"] == "REDACTED"
    if spec.gpu_memory_gb:
        assert s["device_requests"] == [{"count": -1, "capabilities": [["gpu"]]}]
    else:
        assert s["device_requests"] == []  # Tiny-Qwen2-Audio runs on the CPU
    if spec.kind == "vllm":
        assert s["command"][0] == (spec.repo_id if not spec.built_in else "--model")
        limit = 5 if name == "voxtral_mini_3b" else 48  # vLLM issue #22109 for Voxtral; the table's limit for the rest
        assert s["command"][s["command"].index("--limit-mm-per-prompt") + 1] == '{"audio": %d}' % limit
        # vLLM's neutral sampling defaults, not the checkpoint's generation_config.json: greedy as vLLM means it
        assert s["command"][s["command"].index("--generation-config") + 1] == "vllm"
    else:
        assert s["command"][:5] == ["python", "-m", "acousticbench.serve.hf_server", "--model", name]
    assert out.rstrip().endswith(f"export ACOUSTICBENCH_{name.upper()}_ENDPOINT=http://localhost:{spec.port}")


# serve name -> (run.py --model name, fixed port), as docker_serve.sh users and their export lines know them
SERVED = {"voxtral_mini_3b": ("Voxtral-Mini-3B", 8009), "qwen2_audio_7b_instruct": ("Qwen2-Audio-7B-Instruct", 8010),
          "qwen2_5_omni_7b": ("Qwen2.5-Omni-7B", 8011),
          "qwen3_omni_30b_a3b_instruct": ("Qwen3-Omni-30B-A3B-Instruct", 8012),
          "kimi_audio_7b_instruct": ("Kimi-Audio-7B-Instruct", 8013), "minicpm_o_4_5": ("MiniCPM-o-4.5", 8014),
          "tiny_qwen2_audio": ("Tiny-Qwen2-Audio", 8015), "tiny_qwen2_audio_vllm": ("Tiny-Qwen2-Audio-vLLM", 8016)}


def test_the_specs_match_the_registry():
    assert {s.serve_name: (s.display_name, s.port) for s in SPECS.values()} == SERVED
    served = {m.settings["serve_name"]: m.name for m in MODELS.values() if "serve_name" in m.settings}
    assert served == {name: model for name, (model, _port) in SERVED.items()}
    assert SPECS["voxtral_mini_3b"].serve_args[4:] == ("--tokenizer_mode", "mistral", "--config_format", "mistral",
                                                         "--load_format", "mistral")


def test_the_built_in_vllm_model_runs_in_vllms_cpu_image_or_without_docker_with_the_same_arguments(home, capsys):
    from acousticbench.serve.tiny_checkpoint import checkpoint_path

    assert cli.main(["tiny_qwen2_audio_vllm", "--dry-run", "--port", "9016", "--host-network"]) == 0
    s = settings_from(capsys.readouterr().out)
    assert s["image"].startswith("acousticbench/vllm-cpu:")
    assert s["volumes"][str(checkpoint_path())] == {"bind": "/models/tiny-qwen2-audio", "mode": "ro"}  # mounted
    in_docker = s["command"]
    assert s["environment"]["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0" and s["environment"]["HF_HUB_OFFLINE"] == "1"
    assert cli.main(["tiny_qwen2_audio_vllm", "--local", "--dry-run", "--port", "9016"]) == 0
    lines = capsys.readouterr().out.splitlines()
    command = lines[1].split()
    assert "VLLM_ENABLE_V1_MULTIPROCESSING=0" in command and "HF_HUB_OFFLINE=1" in command
    assert command[command.index("-m") + 1] == "vllm.entrypoints.openai.api_server"  # `vllm serve` fails for vllm-cpu
    assert command[command.index("--generation-config") + 1] == "vllm"
    assert command[command.index("--port") + 1] == "9016" and command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--served-model-name") + 1] == "acousticbench/tiny-qwen2-audio"
    assert lines[-1] == "export ACOUSTICBENCH_TINY_QWEN2_AUDIO_VLLM_ENDPOINT=http://localhost:9016"
    local_args = shlex.split(lines[1])[shlex.split(lines[1]).index("--served-model-name"):]
    # the same server arguments and port; in Docker, /v1/models also names the image (the serving manifest's container)
    assert in_docker[in_docker.index("--served-model-name"):-2] == local_args
    assert in_docker[-2:] == ["--middleware", "vllm_container_digest.add_container_digest"]


@pytest.mark.parametrize("name", ["tiny_qwen2_audio", "qwen2_audio_7b_instruct"])
def test_host_network_mode_publishes_nothing_and_binds_loopback_on_the_models_port(name, home, capsys, monkeypatch):
    assert cli.main([name, "--dry-run", "--host-network"]) == 0
    by_flag = capsys.readouterr().out
    monkeypatch.setenv("ACOUSTICBENCH_DOCKER_NETWORK", "host")
    assert cli.main([name, "--dry-run"]) == 0
    assert capsys.readouterr().out == by_flag
    assert "# on the host's network" in by_flag
    s = settings_from(by_flag)
    port = SPECS[name].port
    assert s["network_mode"] == "host" and "ports" not in s
    assert s["command"][s["command"].index("--host") + 1:][:3] == ["127.0.0.1", "--port", str(port)]
    assert s["labels"]["acousticbench.port"] == str(port)
    monkeypatch.setenv("ACOUSTICBENCH_DOCKER_NETWORK", "hots")
    assert cli.main([name, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ACOUSTICBENCH_DOCKER_NETWORK=hots: give host" in err


def test_the_script_dry_run_never_prints_the_token(home):
    out = subprocess.run([SCRIPT, "voxtral_mini_3b", "--dry-run", "--gpus", "1,2", "--port", "9009"],
                         capture_output=True, text=True, timeout=60, env=script_env(home))
    assert out.returncode == 0, out.stderr
    assert TOKEN not in out.stdout + out.stderr and '"HF_TOKEN": "REDACTED"' in out.stdout
    s = settings_from(out.stdout)
    assert s["device_requests"] == [{"device_ids": ["1", "2"], "capabilities": [["gpu"]]}]
    assert s["ports"] == {"8000/tcp": ["127.0.0.1", 9009]}


def test_lora_finetunes_mount_the_adapter_read_only(home, tmp_path, capsys):
    (tmp_path / "archive" / "lora" / "rad_ft").mkdir(parents=True)
    (tmp_path / "archive" / "lora" / "rad_ft" / "adapter_config.json").write_text("{}")
    assert cli.main(["kimi_lora_rad_ft", "--dry-run", "--archive", str(tmp_path / "archive")]) == 0
    s = settings_from(capsys.readouterr().out)
    assert s["command"][-2:] == ["--lora", "/lora/rad_ft"] and "kimi_audio_7b_instruct" in s["command"]
    assert s["volumes"][str(tmp_path / "archive" / "lora" / "rad_ft")] == {"bind": "/lora/rad_ft", "mode": "ro"}
    assert s["volumes"][f"{home}/.cache/acousticbench"]["bind"] == "/root/.cache/acousticbench"  # the merge cache
    assert cli.main(["kimi_lora_missing", "--dry-run", "--archive", str(tmp_path / "archive")]) == 2
    assert "found: rad_ft" in capsys.readouterr().err


def test_tensor_parallel_is_for_vllm_models(home, capsys):
    assert cli.main(["qwen3_omni_30b_a3b_instruct", "--dry-run", "--tp", "2"]) == 0
    assert settings_from(capsys.readouterr().out)["command"][-2:] == ["--tensor-parallel-size", "2"]
    assert cli.main(["kimi_audio_7b_instruct", "--dry-run", "--tp", "2"]) == 2
    assert "--tp applies to the vLLM models" in capsys.readouterr().err
    assert cli.main(["qwen3_omni_30b_a3b_instruct", "--dry-run", "--tp", "2", "--gpus", "0"]) == 2


def test_no_engine_is_one_line_and_exit_2(home):
    env = script_env(home, DOCKER_HOST=f"tcp://127.0.0.1:{closed_port()}")
    out = subprocess.run([SCRIPT, "voxtral_mini_3b"], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith("error: no Docker engine reachable at tcp://127.0.0.1:")
    assert "docker info" in out.stderr


def test_list_works_without_an_engine(home):
    env = script_env(home, DOCKER_HOST=f"tcp://127.0.0.1:{closed_port()}")
    out = subprocess.run([SCRIPT, "--list"], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    for spec in SPECS.values():
        line = next(row for row in out.stdout.splitlines() if row.startswith(spec.serve_name + " "))
        assert spec.image in line and str(spec.port) in line and ("CPU" if not spec.gpu_memory_gb else "GB") in line
    assert "engine not reachable" in out.stdout


def test_unknown_names_list_the_known_ones(home, capsys):
    assert cli.main(["voxtral"]) == 2
    err = capsys.readouterr().err
    assert "Did you mean voxtral_mini_3b?" in err and "qwen2_5_omni_7b" in err and err.count("\n") == 1
