"""docker_serve.sh's docker SDK calls and their arguments, against a fake client that records them: start (build on
first use, run, wait for /health), already running, port taken, container dying, no GPU runtime, gated, stop, list."""
from __future__ import annotations

import hashlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

docker = pytest.importorskip("docker")

from acousticbench.models.local_server import free_port  # noqa: E402
from acousticbench.serve import __main__ as cli  # noqa: E402
from acousticbench.serve import containers, prereqs  # noqa: E402
from acousticbench.serve.specs import SPECS, ServerSpec  # noqa: E402
from conftest import HF_TOKEN as TOKEN  # noqa: E402


class Health(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


class FakeContainer:
    def __init__(self, client, name, labels, status="running", logs=b"", port=None, network="default"):
        self.client, self.name, self.labels, self.status, self._logs = client, name, labels, status, logs
        self.attrs = {"State": {"ExitCode": 137 if status == "exited" else 0},
                      "HostConfig": {"NetworkMode": network,
                                     "PortBindings": {"8000/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(port)}]}
                                     if port and network != "host" else {}}}

    def reload(self):
        self.status = self.client.status_after_run or self.status
        if self.status == "exited":
            self.attrs["State"]["ExitCode"] = 137

    def logs(self, tail):
        return self._logs

    def stop(self, timeout):
        self.client.calls.append(("stop", self.name))
        self.status = "exited"

    def remove(self, force=False):
        self.client.calls.append(("remove", self.name))
        self.client.existing.remove(self)


class FakeImage:
    def __init__(self, tag):
        self.id = "sha256:" + hashlib.sha256(tag.encode()).hexdigest()


H200 = b"0, NVIDIA H200, 143771, 143000\n"  # what nvidia-smi --query-gpu=index,name,memory.total,memory.free prints


class FakeClient:
    """Records the SDK calls; containers.run binds the host port with a /health server, as the container would, and
    answers the GPU probe (a run of an image and command) with `smi`, nvidia-smi's CSV; the probe's image is here unless
    `probe_here` is False."""

    def __init__(self, images=(), existing=(), run_error=None, status_after_run=None, logs=b"", smi=H200,
                 probe_error=None, pull_error=None, probe_here=True):
        self.calls, self.existing = [], list(existing)
        self.images_present = set(images) | ({prereqs.PROBE_IMAGE} if probe_here else set())
        self.run_error, self.status_after_run, self.log_bytes = run_error, status_after_run, logs
        self.smi, self.probe_error, self.pull_error = smi, probe_error, pull_error
        self.servers = []
        self.containers, self.images = self, self

    def list(self, all=False, filters=None):
        found = [c for c in self.existing if all or c.status == "running"]
        if filters and "label" in filters:
            key, _, value = filters["label"].partition("=")
            found = [c for c in found if key in c.labels and (not value or c.labels[key] == value)]
        return found

    def version(self):
        return {"Version": "27.3.1"}

    def run(self, *args, **kwargs):
        if args:  # the GPU probe: run(image, command, device_requests=..., remove=True)
            self.calls.append(("probe", {"image": args[0], "command": args[1], **kwargs}))
            if self.run_error or self.probe_error:
                raise self.run_error or self.probe_error
            return self.smi
        self.calls.append(("run", kwargs))
        if self.run_error:
            raise self.run_error
        port = int(kwargs["labels"]["acousticbench.port"])  # published there, or bound there on the host's network
        server = ThreadingHTTPServer(("127.0.0.1", port), Health)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.servers.append(server)
        container = FakeContainer(self, kwargs["name"], kwargs["labels"], logs=self.log_bytes, port=port,
                                  network=kwargs.get("network_mode", "default"))
        self.existing.append(container)  # the engine lists what it started
        return container

    def get(self, tag):
        if tag not in self.images_present:
            raise docker.errors.ImageNotFound(tag)
        return FakeImage(tag)

    def pull(self, repository, tag=None, **kwargs):  # an offline engine refuses with pull_error
        self.calls.append(("pull", repository))
        if self.pull_error:
            raise self.pull_error
        self.images_present.add(repository)

    def build(self, **kwargs):
        self.calls.append(("build", kwargs))
        self.images_present.add(kwargs["tag"])

    def close_servers(self):
        for server in self.servers:
            server.shutdown()
            server.server_close()


@pytest.fixture
def fake(monkeypatch, home):
    clients = []

    def use(**kwargs) -> FakeClient:
        client = FakeClient(**kwargs)
        monkeypatch.setattr(containers, "connect", lambda: client)
        clients.append(client)
        return client

    monkeypatch.setattr(containers, "POLL_S", 0.01)
    yield use
    for client in clients:
        client.close_servers()


def test_start_builds_on_first_use_runs_waits_and_prints_the_export_line(fake, capsys, home):
    client = fake()
    port = free_port()
    assert cli.main(["voxtral_mini_3b", "--port", str(port)]) == 0
    out, err = capsys.readouterr()
    assert out == f"export ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=http://localhost:{port}\n"
    assert TOKEN not in out + err
    (build,) = [kw for call, kw in client.calls if call == "build"]
    assert build["dockerfile"] == "docker/vllm/Dockerfile" and build["tag"] == SPECS["voxtral_mini_3b"].image
    assert TOKEN not in json.dumps(build, default=str)  # never a build argument, never in a layer
    (run,) = [kw for call, kw in client.calls if call == "run"]
    assert run["environment"] == {"HF_TOKEN": TOKEN, "ACOUSTICBENCH_CONTAINER_DIGEST": FakeImage(build["tag"]).id}
    assert run["ipc_mode"] == "host"
    assert run["ports"] == {"8000/tcp": ("127.0.0.1", port)}
    (request,) = run["device_requests"]
    assert isinstance(request, docker.types.DeviceRequest) and request["Count"] == -1
    assert request["Capabilities"] == [["gpu"]]
    assert (home / ".cache" / "huggingface").is_dir()


def test_a_running_model_is_not_started_twice(fake, capsys):
    client = fake(images=[SPECS["voxtral_mini_3b"].image])
    port = free_port()
    health = ThreadingHTTPServer(("127.0.0.1", port), Health)  # the running container's server, ready
    client.servers.append(health)
    threading.Thread(target=health.serve_forever, daemon=True).start()
    client.existing.append(FakeContainer(client, "acousticbench-voxtral-mini-3b",
                                         {"acousticbench.model": "voxtral_mini_3b", "acousticbench.port": str(port)}))
    assert cli.main(["voxtral_mini_3b"]) == 0
    assert capsys.readouterr().out == f"export ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=http://localhost:{port}\n"
    assert not [c for c in client.calls if c[0] == "run"]


def test_a_port_held_by_a_container_or_a_process_names_it(fake, capsys):
    client = fake(images=[SPECS["qwen2_5_omni_7b"].image])
    client.existing.append(FakeContainer(client, "someone-elses-llm", {}, port=8011))
    assert cli.main(["qwen2_5_omni_7b"]) == 2
    assert "port 8011 is in use (by container someone-elses-llm)" in capsys.readouterr().err
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert cli.main(["qwen2_5_omni_7b", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"port {port} is in use (by another process)" in err and "--port" in err


def test_a_container_that_dies_while_starting_shows_its_last_log_lines_and_the_likely_cause(fake, capsys):
    logs = f"Loading weights\nHF_TOKEN={TOKEN}\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n"
    fake(images=[SPECS["qwen2_audio_7b_instruct"].image], status_after_run="exited", logs=logs.encode())
    assert cli.main(["qwen2_audio_7b_instruct", "--port", str(free_port())]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "acousticbench-qwen2-audio-7b-instruct stopped during start (exit code 137)" in err
    assert "likely cause: out of GPU memory" in err and "CUDA out of memory" in err
    assert TOKEN not in err and "HF_TOKEN=REDACTED" in err


def test_no_gpu_runtime_says_how_to_check(fake, capsys):
    refusal = docker.errors.APIError("500", explanation='could not select device driver "" with capabilities: [[gpu]]')
    fake(images=[SPECS["minicpm_o_4_5"].image], run_error=refusal)
    assert cli.main(["minicpm_o_4_5", "--port", str(free_port())]) == 2
    *progress, error = capsys.readouterr().err.splitlines()  # progress lines, then the one-line error
    assert error.startswith("error: the Docker engine has no GPU runtime")
    assert "docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi" in error


def test_a_gated_model_without_a_token_says_where_to_put_it(fake, capsys, monkeypatch, home):
    (home / ".cache" / "huggingface" / "token").unlink()
    gated = ServerSpec("gated_model", "Gated", "vllm", "org/gated", 8090, 16, gated=True)
    monkeypatch.setitem(SPECS, "gated_model", gated)
    client = fake(images=[gated.image])
    assert cli.main(["gated_model"]) == 2
    err = capsys.readouterr().err
    assert "~/.cache/huggingface/token" in err and "huggingface-cli login" in err
    assert client.calls == []


def test_stop_stops_and_removes_the_container(fake, capsys):
    client = fake()
    client.existing.append(FakeContainer(client, "acousticbench-voxtral-mini-3b",
                                         {"acousticbench.model": "voxtral_mini_3b", "acousticbench.port": "8009"}))
    assert cli.main(["voxtral_mini_3b", "--stop"]) == 0
    assert client.calls == [("stop", "acousticbench-voxtral-mini-3b"), ("remove", "acousticbench-voxtral-mini-3b")]
    assert cli.main(["voxtral_mini_3b", "--stop"]) == 0
    assert "nothing to stop" in capsys.readouterr().out


def test_list_with_an_engine_says_what_runs(fake, capsys):
    client = fake()
    client.existing.append(FakeContainer(client, "acousticbench-qwen2-5-omni-7b",
                                         {"acousticbench.model": "qwen2_5_omni_7b", "acousticbench.port": "8011"}))
    assert cli.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert "running (port 8011)" in next(r for r in out.splitlines() if r.startswith("qwen2_5_omni_7b "))
    assert "not running" in next(r for r in out.splitlines() if r.startswith("voxtral_mini_3b "))


@pytest.mark.parametrize("log, cause", [
    ("huggingface_hub.errors.GatedRepoError: 401 Client Error", "huggingface-cli login"),
    ("OSError: [Errno 28] No space left on device", "disk is full"),
    ("ValueError: No available memory for the cache blocks", "out of GPU memory"),
    ("RuntimeError: Found no NVIDIA driver on your system", "sees no GPU"),
    ("all fine until it was not", "see the log lines above"),
])
def test_likely_causes(log, cause):
    assert cause in containers.likely_cause(log)


@pytest.mark.parametrize("how", [["--host-network"], "ACOUSTICBENCH_DOCKER_NETWORK"])
def test_on_the_host_network_the_build_and_the_server_use_it_and_nothing_is_published(fake, capsys, monkeypatch, how):
    client = fake(images=[SPECS["tiny_qwen2_audio"].image_recipe.build_args["BASE_IMAGE"]])
    port = free_port()
    flags = how if isinstance(how, list) else []
    if not flags:
        monkeypatch.setenv(how, "host")
    assert cli.main(["tiny_qwen2_audio", "--port", str(port), *flags]) == 0
    assert capsys.readouterr().out == f"export ACOUSTICBENCH_TINY_QWEN2_AUDIO_ENDPOINT=http://localhost:{port}\n"
    (build,) = [kw for call, kw in client.calls if call == "build"]
    assert build["network_mode"] == "host" and build["pull"] is False  # RUN steps reach the indexes; no registry
    (run,) = [kw for call, kw in client.calls if call == "run"]
    assert run["network_mode"] == "host" and "ports" not in run
    assert run["command"][run["command"].index("--host") + 1:][:3] == ["127.0.0.1", "--port", str(port)]
    # a second start finds it running on its port; a third model asking for that port is told who holds it
    assert cli.main(["tiny_qwen2_audio", *flags]) == 0
    assert "is already running on 127.0.0.1:%d" % port in capsys.readouterr().err
    assert cli.main(["qwen2_5_omni_7b", "--port", str(port), *flags]) == 2
    assert f"port {port} is in use (by container acousticbench-tiny-qwen2-audio)" in capsys.readouterr().err


def test_a_cpu_image_without_its_local_base_says_which_script_makes_it(fake, capsys):
    client = fake()
    assert cli.main(["tiny_qwen2_audio_vllm", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert "acousticbench/torch-cpu:" in err and "scripts/docker_base.sh" in err and err.count("\n") == 1
    assert not [c for c in client.calls if c[0] in ("build", "pull", "run")]  # no registry has it: nothing pulled


def _time_wait_on(port: int) -> None:
    """A server on `port` that closes its side of a connection first, as a stopped server does: TIME-WAIT stays. Its
    listening socket has SO_REUSEADDR, as asyncio's and so uvicorn's and vLLM's have."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen()
        client = socket.create_connection(("127.0.0.1", port))
        served, _ = listener.accept()
        served.close()  # the server closes first: its (127.0.0.1:port) end waits about a minute
        client.recv(1)
        client.close()


def test_a_port_a_stopped_server_left_in_time_wait_is_free_and_a_listened_one_is_not(fake, capsys):
    port = free_port()
    _time_wait_on(port)
    with socket.socket() as plain, pytest.raises(OSError):  # what the probe without SO_REUSEADDR said
        plain.bind(("127.0.0.1", port))
    assert containers.port_user(fake(), port) is None
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", port))
        holder.listen()
        assert containers.port_user(fake(), port) == "another process"
