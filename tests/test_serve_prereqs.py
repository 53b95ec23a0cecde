"""docker_serve.sh --check and the same check before a container starts: the engine, its NVIDIA runtime, the GPUs a
container sees and their memory against the model's need, and the disk a LoRA finetune's first merge writes; through
the recorded SDK fake, and with the real docker client and SDK against no engine."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

docker = pytest.importorskip("docker")

from acousticbench.models.local_server import free_port  # noqa: E402
from acousticbench.serve import __main__ as cli  # noqa: E402
from acousticbench.serve import prereqs  # noqa: E402
from acousticbench.serve.specs import SPECS  # noqa: E402
from test_serve_containers import fake  # noqa: E402,F401 (a fixture)
from test_serve_docker import SCRIPT, closed_port, script_env  # noqa: E402

RTX4090 = b"0, NVIDIA GeForce RTX 4090, 24564, 24000\n"
FOUR_4090 = b"".join(f"{i}, NVIDIA GeForce RTX 4090, 24564, 24000\n".encode() for i in range(4))
NO_RUNTIME = docker.errors.APIError("500", explanation='could not select device driver "" with capabilities: [[gpu]]')


def test_check_on_a_good_machine_says_what_it_saw(fake, capsys):
    client = fake()
    assert cli.main(["kimi_audio_7b_instruct", "--check"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["ok: Docker engine 27.3.1 reachable",
                   "ok: GPU 0 (NVIDIA H200) visible in a container: 140 GB, 140 GB free",
                   "ok: kimi_audio_7b_instruct can start here (40 GB of GPU memory)"]
    (probe,) = [kw for call, kw in client.calls if call == "probe"]
    assert probe["image"] == prereqs.PROBE_IMAGE and probe["command"][0] == "nvidia-smi" and probe["remove"] is True
    assert probe["network_mode"] == "none"  # it needs none, and an engine without a bridge has no default one
    (request,) = probe["device_requests"]
    assert request["Count"] == -1 and request["Capabilities"] == [["gpu"]]
    assert not [c for c in client.calls if c[0] in ("run", "build")]  # a check starts nothing


def test_no_nvidia_runtime_is_one_line_naming_the_toolkit(fake, capsys):
    fake(probe_error=NO_RUNTIME)
    assert cli.main(["voxtral_mini_3b", "--check"]) == 1
    problems = [line for line in capsys.readouterr().out.splitlines() if line.startswith("problem:")]
    assert len(problems) == 1 and "no GPU runtime (NVIDIA Container Toolkit)" in problems[0]
    assert prereqs.TOOLKIT in problems[0] and prereqs.GPU_CHECK in problems[0]


def test_a_driver_that_fails_in_the_container_says_to_check_it_on_the_host(fake, capsys):
    failure = docker.errors.ContainerError("probe", 9, "nvidia-smi", prereqs.PROBE_IMAGE,
                                           b"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver")
    fake(probe_error=failure)
    assert cli.main(["--check"]) == 1
    (problem,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("problem:")]
    assert "sees no GPU (NVIDIA-SMI has failed" in problem and "`nvidia-smi` on the host" in problem


@pytest.mark.parametrize("name, smi, args, expected", [
    ("qwen3_omni_30b_a3b_instruct", RTX4090, [], "needs 80 GB of GPU memory on each of 1 GPU(s); the largest here, "
     "GPU 0 (NVIDIA GeForce RTX 4090), has 24 GB: use bigger GPUs (vLLM: spread it over GPUs with --tp N)"),
    ("kimi_audio_7b_instruct", RTX4090, [], "has 24 GB: use bigger GPUs"),
    ("qwen3_omni_30b_a3b_instruct", FOUR_4090, ["--tp", "4"], None),  # 20 GB on each of four 24 GB GPUs
    ("voxtral_mini_3b", b"0, NVIDIA A100, 81920, 9000\n", [], "needs 16 GB free on each of 1 GPU(s) but other "
     "processes hold the memory (GPU 0 9 of 80 GB free): stop them (see `nvidia-smi`) or pick free GPUs with --gpus"),
])
def test_gpu_memory_is_compared_with_the_models_need(fake, capsys, name, smi, args, expected):
    fake(smi=smi)
    assert cli.main([name, "--check", *args]) == (1 if expected else 0)
    out = capsys.readouterr().out
    if expected:
        assert out.count("problem:") == 1 and expected in out
    else:
        assert "problem" not in out and out.count("ok: GPU") == 4


def test_the_same_check_runs_before_a_start_and_nothing_is_built(fake, capsys):
    client = fake(smi=RTX4090)
    assert cli.main(["kimi_audio_7b_instruct", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: kimi_audio_7b_instruct needs 40 GB of GPU memory") and err.count("\n") == 1
    assert not [c for c in client.calls if c[0] in ("build", "run")]


def test_an_offline_start_without_the_probe_image_goes_ahead_with_a_note(fake, capsys):
    offline = docker.errors.APIError("500", explanation="Get https://registry-1.docker.io/v2/: dial tcp: lookup "
                                     "registry-1.docker.io: no such host")
    client = fake(images=[SPECS["voxtral_mini_3b"].image], pull_error=offline, probe_here=False)  # model image local
    port = free_port()
    assert cli.main(["voxtral_mini_3b", "--port", str(port)]) == 0
    out, err = capsys.readouterr()
    assert out == f"export ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=http://localhost:{port}\n"
    (note,) = [line for line in err.splitlines() if line.startswith("note:")]
    assert note == (f"note: GPUs not checked before the start: {prereqs.PROBE_IMAGE} is not here and cannot be pulled "
                    "(Get https://registry-1.docker.io/v2/: dial tcp: lookup registry-1.docker.io: no such host); "
                    "`docker_serve.sh --check` checks them")
    assert [c[0] for c in client.calls if c[0] in ("pull", "probe", "build", "run")] == ["pull", "run"]


def test_a_start_pulls_a_missing_probe_image_and_probes(fake, capsys):
    client = fake(smi=RTX4090, probe_here=False)
    assert cli.main(["kimi_audio_7b_instruct", "--port", str(free_port())]) == 2
    assert "needs 40 GB of GPU memory" in capsys.readouterr().err
    assert [c[0] for c in client.calls if c[0] in ("pull", "probe")] == ["pull", "probe"]


def test_check_never_pulls_and_names_a_missing_probe_image(fake, capsys):
    client = fake(probe_here=False)  # an offline machine: a pull would fail and read as the engine refusing the probe
    assert cli.main(["voxtral_mini_3b", "--check"]) == 1
    (problem,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("problem:")]
    assert problem.startswith("problem: probe image not available offline: " + prereqs.PROBE_IMAGE)
    assert f"`docker pull {prereqs.PROBE_IMAGE}`" in problem
    assert not [c for c in client.calls if c[0] in ("pull", "probe")]


def test_a_cpu_model_needs_no_gpu_probe(fake, capsys):
    client = fake(probe_error=NO_RUNTIME)
    assert cli.main(["tiny_qwen2_audio", "--check"]) == 0
    assert "ok: tiny_qwen2_audio can start here (no GPU (CPU))" in capsys.readouterr().out
    assert not [c for c in client.calls if c[0] == "probe"]


@pytest.fixture
def adapter(tmp_path):
    folder = tmp_path / "archive" / "lora" / "rad_ft"
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text("{}")
    return tmp_path / "archive"


def test_a_lora_first_start_refuses_without_the_disk_its_merge_needs(fake, capsys, home, adapter, monkeypatch):
    client = fake()
    monkeypatch.setattr(prereqs.shutil, "disk_usage", lambda p: type("Usage", (), {"free": 12e9})())
    port = str(free_port())
    assert cli.main(["kimi_lora_rad_ft", "--archive", str(adapter), "--port", port]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: kimi_lora_rad_ft's first start merges {adapter}/lora/rad_ft into "
                   f"moonshotai/Kimi-Audio-7B-Instruct and needs about 60 GB free in {home}/.cache/acousticbench, only "
                   "12 GB is (48 GB missing): free space on that disk, then start again\n")
    assert not [c for c in client.calls if c[0] in ("build", "run")]

    merged = home / ".cache" / "acousticbench" / "merged" / "0123abcd"  # what the container leaves once it merged
    merged.mkdir(parents=True)
    (merged / "ACOUSTICBENCH_MERGED.json").write_text(json.dumps({"base": "/hf/kimi", "adapter": "/lora/rad_ft"}))
    assert cli.main(["kimi_lora_rad_ft", "--archive", str(adapter), "--port", port]) == 0  # later starts reuse it
    assert capsys.readouterr().out.startswith("export ACOUSTICBENCH_KIMI_LORA_RAD_FT_ENDPOINT=")


def test_check_with_enough_disk_for_the_merge(fake, capsys, home, adapter, monkeypatch):
    fake()
    monkeypatch.setattr(prereqs.shutil, "disk_usage", lambda p: type("Usage", (), {"free": 500e9})())
    assert cli.main(["kimi_lora_rad_ft", "--check", "--archive", str(adapter)]) == 0
    assert "ok: kimi_lora_rad_ft can start here" in capsys.readouterr().out


@pytest.mark.parametrize("where", ["tcp", "socket"])
def test_check_without_an_engine_is_one_line_with_the_real_client(home, tmp_path, where):
    """The real docker SDK behind the script, and the docker CLI where installed, both find no engine."""
    host = f"tcp://127.0.0.1:{closed_port()}" if where == "tcp" else f"unix://{tmp_path}/docker.sock"
    out = subprocess.run([SCRIPT, "voxtral_mini_3b", "--check"], capture_output=True, text=True, timeout=60,
                         env=script_env(home, DOCKER_HOST=host))
    assert out.returncode == 1 and out.stderr == ""
    assert out.stdout.count("\n") == 1 and out.stdout.startswith(f"problem: no Docker engine reachable at {host} (")
    assert ("connection refused" if where == "tcp" else "no socket there") in out.stdout and "docker info" in out.stdout
    if shutil.which("docker"):  # the docker CLI agrees that nothing answers there
        cli_out = subprocess.run(["docker", "--host", host, "info"], capture_output=True, text=True, timeout=60)
        assert cli_out.returncode != 0 and "Cannot connect to the Docker daemon" in cli_out.stderr + cli_out.stdout
