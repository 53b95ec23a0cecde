"""What a model's first start needs from this machine, checked before any image is built (docker_serve.sh --check, and
before the first serve): a Docker engine, its NVIDIA runtime, GPUs a container can see with the memory the model's
table row asks for, and for a LoRA finetune the disk its one-time merge writes. One line per problem, naming the fix."""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from acousticbench.models.lora import MERGE_DISK_GB
from acousticbench.serve.specs import ServerSpec, parse_gpus

PROBE_IMAGE = "nvidia/cuda:12.4.1-base-ubuntu22.04"  # small, and what NVIDIA's own install guide checks with
PROBE = ["nvidia-smi", "--query-gpu=index,name,memory.total,memory.free", "--format=csv,noheader,nounits"]
GPU_CHECK = f"docker run --rm --gpus all {PROBE_IMAGE} nvidia-smi"
TOOLKIT = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"


@dataclass(frozen=True)
class Gpu:
    index: str
    name: str
    total_gb: float  # GiB, as GPU memory is quoted ("80 GB" is 81920 MiB)
    free_gb: float


def parse_smi(text: str) -> list[Gpu]:
    """nvidia-smi's CSV (index, name, MiB total, MiB free) -> GPUs; lines it cannot read are skipped."""
    found = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) == 4 and cells[2].isdigit() and cells[3].isdigit():
            found.append(Gpu(cells[0], cells[1], int(cells[2]) / 1024, int(cells[3]) / 1024))
    return found


def probe_gpus(client, gpus: str) -> tuple[list[Gpu], str | None]:
    """The GPUs a container started with `--gpus` sees, or the problem that stopped it seeing any."""
    import docker

    request = docker.types.DeviceRequest(**parse_gpus(gpus))
    try:  # never a pull: the SDK's run() pulls a missing image, which offline reads as the engine refusing the probe
        client.images.get(PROBE_IMAGE)
    except docker.errors.ImageNotFound:
        return [], (f"probe image not available offline: {PROBE_IMAGE} is not here to look for GPUs with; "
                    f"`docker pull {PROBE_IMAGE}` where a registry is reachable")
    try:
        out = client.containers.run(PROBE_IMAGE, PROBE, device_requests=[request], remove=True, network_mode="none")
    except docker.errors.ContainerError as err:
        tail = (err.stderr or b"").decode(errors="replace").strip().splitlines()[-1:] or [str(err)]
        return [], (f"a container with --gpus {gpus} sees no GPU ({tail[0][:160]}): check the NVIDIA driver with "
                    f"`nvidia-smi` on the host, then `{GPU_CHECK}`")
    except docker.errors.APIError as err:
        text = str(err.explanation or err)
        if "could not select device driver" in text or "nvidia-container" in text:
            return [], (f"the Docker engine has no GPU runtime (NVIDIA Container Toolkit): install it ({TOOLKIT}), "
                        f"restart Docker, and check with `{GPU_CHECK}`")
        return [], f"the Docker engine refused the GPU probe ({text[:160]}): check with `{GPU_CHECK}`"
    found = parse_smi(out.decode(errors="replace") if isinstance(out, bytes) else str(out))
    return found, None if found else f"a container with --gpus {gpus} sees no GPU: check with `{GPU_CHECK}`"


def probe_unavailable(client) -> str | None:
    """Why the probe image is neither here nor pullable (an offline machine), or None when the probe can run."""
    import docker
    import requests

    try:
        client.images.get(PROBE_IMAGE)
        return None
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.pull(PROBE_IMAGE)
        return None
    except (docker.errors.DockerException, requests.exceptions.RequestException) as err:
        reason = str(getattr(err, "explanation", None) or err).strip().splitlines() or [type(err).__name__]
        return f"{PROBE_IMAGE} is not here and cannot be pulled ({reason[0][:160]})"


def memory_problem(spec: ServerSpec, gpus: list[Gpu], tp: int | None, dp: int | None) -> str | None:
    """Enough GPUs with the model's memory: one per replica for our server, --tp per replica (x --dp) for vLLM."""
    per_gpu = spec.gpu_memory_gb / (tp or 1)
    wanted = (tp or 1) * (dp or 1)
    fitting = [g for g in gpus if g.free_gb >= per_gpu]
    if len(fitting) >= wanted:
        return None
    largest = max(gpus, key=lambda g: g.total_gb)
    spread = " (vLLM: spread it over GPUs with --tp N)" if spec.kind == "vllm" else ""
    if sum(1 for g in gpus if g.total_gb >= per_gpu) < wanted:
        return (f"{spec.serve_name} needs {per_gpu:g} GB of GPU memory on each of {wanted} GPU(s); the largest here, "
                f"GPU {largest.index} ({largest.name}), has {largest.total_gb:.0f} GB: use bigger GPUs{spread}")
    busy = ", ".join(f"GPU {g.index} {g.free_gb:.0f} of {g.total_gb:.0f} GB free" for g in gpus)
    return (f"{spec.serve_name} needs {per_gpu:g} GB free on each of {wanted} GPU(s) but other processes hold the "
            f"memory ({busy}): stop them (see `nvidia-smi`) or pick free GPUs with --gpus")


def _existing(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def merged_before(spec: ServerSpec, cache: Path) -> bool:
    """Whether a finished merge of this adapter is in the cache (the container wrote /lora/<name> into its marker)."""
    for done in (cache / "merged").glob("*/ACOUSTICBENCH_MERGED.json"):
        try:
            if json.loads(done.read_text()).get("adapter") == f"/lora/{spec.lora}":
                return True
        except (OSError, ValueError):
            continue
    return False


def merge_disk_problem(spec: ServerSpec, home: Path, archive: Path) -> str | None:
    """A LoRA finetune's first start writes the merged model (about MERGE_DISK_GB) into ~/.cache/acousticbench."""
    cache = home / ".cache" / "acousticbench"
    if not spec.lora or merged_before(spec, cache):
        return None
    free_gb = shutil.disk_usage(_existing(cache)).free / 1e9
    if free_gb >= MERGE_DISK_GB:
        return None
    return (f"{spec.serve_name}'s first start merges {archive / 'lora' / spec.lora} into {spec.repo_id} and needs "
            f"about {MERGE_DISK_GB} GB free in {cache}, only {free_gb:.0f} GB is ({MERGE_DISK_GB - free_gb:.0f} GB "
            "missing): free space on that disk, then start again")


def problems(client, spec: ServerSpec | None, *, gpus: str, tp: int | None, dp: int | None, home: Path,
             archive: Path, probe: bool = True) -> tuple[list[str], list[Gpu]]:
    """Every problem a first start of `spec` (or of any GPU model, for None) would hit, and the GPUs seen;
    probe=False leaves the GPUs unchecked."""
    found = [p for p in [merge_disk_problem(spec, home, archive) if spec else None] if p]
    if not probe or (spec is not None and not spec.gpu_memory_gb):
        return found, []  # runs on the CPU, or the probe cannot run here: nothing to probe
    seen, problem = probe_gpus(client, gpus)
    if problem:
        return found + [problem], []
    memory = memory_problem(spec, seen, tp, dp) if spec else None
    return found + ([memory] if memory else []), seen
