"""A served open-weight model as a value: serve_model() starts it (in Docker, without Docker, or as SLURM replicas)
and returns a Served handle (its URL, the export line a run finds it through, stop()); nothing is printed, progress
goes to the current reporter."""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from acousticbench.core.environment import docker_network, endpoint_variable
from acousticbench.core.errors import UserError
from acousticbench.core.reporter import warn
from acousticbench.serve.specs import ServerSpec, container_settings
from acousticbench.serve.vllm_container_digest import DIGEST

How = Literal["docker", "local", "slurm"]


@dataclass(frozen=True)
class ServeOptions:
    """How to serve: the host port (None: the model's own), GPUs, vLLM's tensor and data parallel sizes, seconds to
    wait for /health (None: the model's), the archive holding lora/<name>/, and the host's network for Docker."""

    port: int | None = None
    gpus: str = "all"
    tp: int | None = None
    dp: int | None = None
    wait: float | None = None
    archive: Path = Path("archive")
    host_network: bool = False


@dataclass(frozen=True)
class Served:
    """A model being served: `url` (None for SLURM replicas, found through their registry), the `export_line` a run
    finds it through, whether this call `started` it, and stop(). As a context manager it stops what it started."""

    spec: ServerSpec = field(repr=False)
    how: How
    url: str | None
    export_line: str
    started: bool
    job: str | None = None  # SLURM: the array's job id

    def stop(self) -> str:
        """Stop the server (or cancel the SLURM jobs); the line saying what was stopped."""
        return stop_model(self.spec, self.how)

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc) -> None:
        if self.started:
            self.stop()


def export_line(spec: ServerSpec, port: int) -> str:
    return f"export {endpoint_variable(spec.serve_name)}=http://localhost:{port}"


def hf_token(home: Path) -> str | None:
    """The token `huggingface-cli login` saved; read here, handed to the container by environment only."""
    path = home / ".cache" / "huggingface" / "token"
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def docker_settings(spec: ServerSpec, options: ServeOptions, home: Path) -> tuple[dict, str | None]:
    """The container's settings (docker SDK keyword arguments) and the Hugging Face token, or one line to fix."""
    if options.port is not None and not 1 <= options.port <= 65535:
        raise UserError(f"--port {options.port} is not a TCP port (1-65535).")
    for flag, value in (("--tp", options.tp), ("--dp", options.dp)):
        if value is not None and value < 1:
            raise UserError(f"{flag} {value}: give a number, 1 or more.")
    token = hf_token(home)
    settings = container_settings(spec, port=options.port or spec.port, gpus=options.gpus, tp=options.tp, token=token,
                                  home=home, archive=options.archive, dp=options.dp,
                                  network=docker_network(options.host_network))
    return settings, token


def _served(spec: ServerSpec, how: How, port: int, started: bool) -> Served:
    return Served(spec, how, f"http://localhost:{port}", export_line(spec, port), started)


def start_in_docker(spec: ServerSpec, options: ServeOptions, home: Path) -> Served:
    """Start the model's container (its image built on first use) and wait for /health; one already running is
    waited for and handed back, not started twice."""
    from acousticbench.serve import containers, prereqs

    settings, token = docker_settings(spec, options, home)
    if spec.gated and token is None:
        raise UserError(f"{spec.repo_id} is gated: put your Hugging Face token in ~/.cache/huggingface/token "
                        "(or run `huggingface-cli login`) and accept the model's terms on its Hub page.")
    port, wait_s = options.port or spec.port, options.wait or spec.start_timeout_s
    client = containers.connect()
    existing = containers.find_container(client, spec)
    secrets = [token] if token else []
    if existing is not None and existing.status == "running":
        port = int(existing.labels.get("acousticbench.port", port))
        warn(f"{existing.name} is already running on 127.0.0.1:{port}")
        containers.wait_ready(existing, port, wait_s, warn, secrets)  # it may still load
        return _served(spec, "docker", port, started=False)
    if existing is not None:
        existing.remove(force=True)  # a stopped container from an earlier start; its name is needed again
    # an offline machine with the model's image and weights may lack the probe's image: start without the GPU check
    unprobed = prereqs.probe_unavailable(client) if spec.gpu_memory_gb else None
    if unprobed:
        warn(f"note: GPUs not checked before the start: {unprobed}; `docker_serve.sh --check` checks them")
    found, _gpus = prereqs.problems(client, spec, gpus=options.gpus, tp=options.tp, dp=options.dp, home=home,
                                    archive=options.archive, probe=unprobed is None)
    if found:  # known now, not after a long image build and a container that dies
        raise UserError("\n".join(found))
    who = containers.port_user(client, port)
    if who:
        raise UserError(f"port {port} is in use (by {who}): stop it or pass --port N (e.g. --port {port + 1000}).")
    containers.ensure_image(client, spec, warn, docker_network(options.host_network))
    if spec.built_in and spec.kind == "vllm":
        from acousticbench.serve.tiny_checkpoint import checkpoint_dir

        checkpoint_dir()  # built on the host (numpy, seconds), mounted read-only where the settings say
    for host, mount in settings["volumes"].items():
        if mount["mode"] == "rw":
            Path(host).mkdir(parents=True, exist_ok=True)  # else the engine creates it, owned by root
    # the image's id, which the server lists in /v1/models and the harness in each run's serving manifest
    settings["environment"][DIGEST] = client.images.get(spec.image).id
    warn(f"starting {settings['name']} ({spec.repo_id}) on 127.0.0.1:{port}, waiting for /health...")
    container = containers.run_container(client, spec, settings)
    containers.wait_ready(container, port, wait_s, warn, secrets)
    warn(f"{settings['name']} is ready; a run finds it through:")
    return _served(spec, "docker", port, started=True)


def start_locally(spec: ServerSpec, options: ServeOptions) -> Served:
    """The same server, arguments and port without Docker, in the background (it outlives this process)."""
    from acousticbench.serve import local as serving

    refuse_parallel_locally(options)
    already = serving.running(spec)
    port = serving.start_detached(spec, options.port or spec.port, options.wait or spec.start_timeout_s, warn,
                                  options.archive)
    warn(f"{spec.serve_name} is ready without Docker; a run finds it through:")
    return _served(spec, "local", port, started=not already)


def refuse_parallel_locally(options: ServeOptions) -> None:
    if options.tp or options.dp:
        raise UserError("--tp and --dp apply to Docker's vLLM; with --local add vLLM's own flags to the model's table.")


def start_on_slurm(spec: ServerSpec, options: ServeOptions, replicas: int = 1, sbatch_options: list[str] = (),
                   registry: Path | None = None, server_command: str | None = None) -> Served:
    """sbatch the server (the settings of a local start) as a job array; each replica registers in `registry` once
    healthy, and a run finds them there."""
    from acousticbench.serve import slurm as cluster

    registry = (registry or cluster.default_registry()).expanduser().resolve()
    job = cluster.submit(spec, registry, replicas, list(sbatch_options), options.archive, server_command)
    warn(f"submitted job {job} ({replicas} replica(s) of {spec.serve_name}); each registers in "
         f"{registry / spec.serve_name} once /health answers; `docker_serve.sh {spec.serve_name} --slurm --stop` "
         "cancels them. A run finds them through:")
    return Served(spec, "slurm", None, f"export ACOUSTICBENCH_ENDPOINTS_FROM={shlex.quote(str(registry))}", True, job)


def stop_model(spec: ServerSpec, how: How) -> str:
    """Stop the model's container, its server started without Docker, or cancel its SLURM jobs: the line saying so."""
    if how == "slurm":
        from acousticbench.serve import slurm as cluster

        return cluster.cancel_named(spec)
    if how == "local":
        from acousticbench.serve import local as serving

        return serving.stop(spec)
    from acousticbench.serve import containers

    return containers.stop(containers.connect(), spec)
