"""The Docker engine side of docker_serve.sh: build on first use, start, wait for /health, stop, list."""
from __future__ import annotations

import os
import time
from typing import Any, Callable

from acousticbench.core.errors import UserError
from acousticbench.models.health import health_status, port_taken
from acousticbench.serve.prereqs import GPU_CHECK
from acousticbench.serve.specs import REPO, ServerSpec, container_name, image_for

LABEL = "acousticbench.model"
POLL_S = 2.0  # between /health checks while a container starts
Log = Callable[[str], None]

# (what a failing server's log says, the likely cause in the user's words)
CAUSES = (
    (("out of memory", "outofmemoryerror", "no available memory for the cache blocks"),
     "out of GPU memory: free the GPU, pick an emptier one with --gpus, or (vLLM) spread the model with --tp"),
    (("gatedrepoerror", "gated repo", "401 client error", "access to model", "is restricted"),
     "the model is gated or the token lacks access: put a Hugging Face token in ~/.cache/huggingface/token (or run "
     "`huggingface-cli login`) and accept the model's terms on its Hub page"),
    (("no space left on device",), "the disk is full: the weights go to ~/.cache/huggingface"),
    (("could not select device driver", "nvidia-container-cli", "no cuda gpus are available", "found no nvidia driver"),
     f"the container sees no GPU; check with `{GPU_CHECK}`"),
    (("connectionerror", "max retries exceeded", "temporary failure in name resolution", "localentrynotfounderror"),
     "the weights could not be downloaded: check this machine's network access to huggingface.co"),
)


class EngineUnreachable(UserError):
    """No Docker engine answers where the SDK looks (DOCKER_HOST, else the local socket)."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"no Docker engine reachable at {where} ({reason}): start Docker and check with "
                         "`docker info`; --dry-run and --list work without one.")
        self.where, self.reason = where, reason


def _unreachable_reason(err: Exception) -> str:
    text = str(err)
    for needle, reason in (("No such file", "no socket there"), ("Connection refused", "connection refused"),
                           ("Permission denied", "permission denied: add yourself to the docker group"),
                           ("timed out", "timed out")):
        if needle in text:
            return reason
    return text[-160:]


def connect():
    """A docker SDK client, or a one-line error saying the engine is not there and how to check."""
    try:
        import docker
    except ImportError:
        raise UserError('the docker SDK is missing: pip install -e ".[serve]"') from None
    try:
        return docker.from_env(timeout=15)
    except docker.errors.DockerException as err:
        where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        raise EngineUnreachable(where, _unreachable_reason(err)) from None


def likely_cause(log_text: str) -> str:
    lowered = log_text.lower()
    for needles, cause in CAUSES:
        if any(n in lowered for n in needles):
            return cause
    return "see the log lines above"


def find_container(client, spec: ServerSpec):
    """Our container for this model (running or not), or None."""
    found = client.containers.list(all=True, filters={"label": f"{LABEL}={spec.serve_name}"})
    return found[0] if found else None


def _host_ports(container) -> set[int]:
    host = container.attrs.get("HostConfig") or {}
    if host.get("NetworkMode") == "host":  # nothing published: the server binds the port on its label itself
        label = container.labels.get("acousticbench.port", "")
        return {int(label)} if label.isdigit() else set()
    bindings = host.get("PortBindings") or {}
    return {int(b["HostPort"]) for lst in bindings.values() for b in (lst or []) if b.get("HostPort")}


def port_user(client, port: int) -> str | None:
    """Who holds a host port: a container (by name) or another process; None when it is free (a port a stopped
    server left in TIME-WAIT is free: a new server binds it)."""
    for container in client.containers.list():
        if port in _host_ports(container):
            return f"container {container.name}"
    return "another process" if port_taken(port) else None


def _missing_base(client, spec: ServerSpec) -> str | None:
    """Our own local base (the CPU images') when it is not here: no registry has it, scripts/docker_base.sh makes it."""
    import docker

    base = spec.image_recipe.build_args.get("BASE_IMAGE", "")
    if not base.startswith("acousticbench/"):
        return None  # a registry's image: the engine pulls it during the build
    try:
        client.images.get(base)
        return None
    except docker.errors.ImageNotFound:
        return base


def ensure_image(client, spec: ServerSpec, log: Log, network: str = "bridge") -> None:
    """Build the model's image on first use (and when our sources changed); the token never enters a build. On the
    host's network the build's RUN steps reach the package indexes through it (an engine without a bridge has none)."""
    import docker

    tag, dockerfile, target = image_for(spec)
    try:
        client.images.get(tag)
        return
    except docker.errors.ImageNotFound:
        pass
    base = _missing_base(client, spec)
    if base:
        raise UserError(f"the base image {base} of {tag} is not here: make it with scripts/docker_base.sh "
                        "(Debian's packages and the CPU torch wheel, no registry).")
    log(f"building image {tag} from {dockerfile} (first use: several minutes)...")
    try:
        client.images.build(path=str(REPO), dockerfile=dockerfile, tag=tag, target=target, rm=True, pull=False,
                            network_mode="host" if network == "host" else None,
                            buildargs=spec.image_recipe.build_args)  # every pin, from models/images.py only
    except docker.errors.BuildError as err:
        tail = [str(c.get("stream") or c.get("error") or "").rstrip() for c in err.build_log][-15:]
        raise UserError(f"building {tag} failed: {err.msg}\n" + "\n".join(t for t in tail if t)) from None


def run_container(client, spec: ServerSpec, settings: dict[str, Any]):
    """containers.run() with the GPU requests made SDK objects; engine refusals become one-line errors."""
    import docker

    requests = [docker.types.DeviceRequest(**r) for r in settings["device_requests"]]
    try:
        return client.containers.run(**{**settings, "device_requests": requests})
    except docker.errors.APIError as err:
        text = str(err.explanation or err)
        port = settings["labels"]["acousticbench.port"]
        if "could not select device driver" in text or "nvidia-container" in text:
            raise UserError(f"the Docker engine has no GPU runtime (NVIDIA Container Toolkit) for {spec.serve_name}: "
                            f"check with `{GPU_CHECK}`") from None
        if "port is already allocated" in text or "address already in use" in text:
            raise UserError(f"port {port} is in use: pass --port N") from None
        raise UserError(f"the Docker engine refused to start {spec.serve_name}: {text}") from None


def wait_ready(container, port: int, wait_s: float, log: Log, secrets: list[str]) -> None:
    """Until /health answers 200; the container dying or the deadline passing is an error with its last log lines."""
    deadline = time.monotonic() + wait_s
    next_note = time.monotonic() + 60
    while True:
        container.reload()
        if container.status in ("exited", "dead"):
            code = container.attrs.get("State", {}).get("ExitCode")
            raise UserError(_failure(container, f"{container.name} stopped during start (exit code {code})", secrets))
        if health_status(f"http://127.0.0.1:{port}") == 200:
            return
        if time.monotonic() >= deadline:
            raise UserError(_failure(container, f"{container.name} is not ready after {wait_s:g} s (still loading? "
                                     f"`docker logs -f {container.name}`, or give it longer with --wait)", secrets))
        if time.monotonic() >= next_note:
            log(f"still starting {container.name} (first start downloads the weights)...")
            next_note += 60
        time.sleep(POLL_S)


def _failure(container, headline: str, secrets: list[str]) -> str:
    try:
        text = container.logs(tail=25).decode("utf-8", errors="replace")
    except Exception:  # the engine may have removed it already; the headline still says what happened
        text = ""
    for secret in secrets:
        text = text.replace(secret, "REDACTED") if secret else text
    lines = "\n".join("  | " + line for line in text.rstrip().splitlines())
    return f"{headline}; likely cause: {likely_cause(text)}. Last log lines:\n{lines}"


def stop(client, spec: ServerSpec) -> str:
    container = find_container(client, spec)
    if container is None:
        return f"no container for {spec.serve_name} ({container_name(spec)}) is there; nothing to stop."
    if container.status == "running":
        container.stop(timeout=30)
    container.remove()
    return f"stopped and removed {container.name}."


def running_status(client) -> dict[str, str]:
    """serve name -> 'running (port P)' or the container's state, for our labelled containers."""
    status = {}
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        name = container.labels.get(LABEL, "")
        port = container.labels.get("acousticbench.port", "?")
        status[name] = f"running (port {port})" if container.status == "running" else container.status
    return status
