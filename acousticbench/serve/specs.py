"""The model servers we know how to start: a table in code, and the exact container settings for each."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from acousticbench.core.errors import UserError, unknown_name
from acousticbench.models import lora
from acousticbench.models.images import IMAGES, Image
from acousticbench.models.open_weight import OPEN_WEIGHT, OpenWeight
from acousticbench.serve.vllm_container_digest import MIDDLEWARE

REPO = Path(__file__).resolve().parents[2]
CONTAINER_PORT = 8000
CONTAINER_HF_CACHE = "/root/.cache/huggingface"
CONTAINER_OUR_CACHE = "/root/.cache/acousticbench"  # merged LoRA models live here, on the host's disk
CONTAINER_VLLM_CACHE = "/root/.cache/vllm"
CONTAINER_CHECKPOINT = "/models/tiny-qwen2-audio"  # the tiny checkpoint, built on the host, mounted read-only
REDACTED = "REDACTED"
# vLLM on a CPU, as tried on 2 cores: the engine in one process, one OpenMP thread, 1 GB of KV cache, no Hub lookups
CPU_ENV = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0", "OMP_NUM_THREADS": "1", "VLLM_CPU_KVCACHE_SPACE": "1",
           "HF_HUB_OFFLINE": "1"}


def limit_mm(model: OpenWeight) -> tuple[str, str]:
    """vLLM's --limit-mm-per-prompt from the model's limit in the table, so the server and the harness agree."""
    return "--limit-mm-per-prompt", '{"audio": %d}' % model.limits.audio_items


# vLLM's own neutral sampling defaults, not the checkpoint's generation_config.json (repetition penalty, top-k/p), which
# its default `--generation-config auto` applies to every request that leaves them unset (vllm/config/model.py,
# ModelConfig.get_diff_sampling_param, at v0.32.0): temperature 0 alone would not be greedy
GREEDY_AS_VLLM_MEANS_IT = ("--generation-config", "vllm")


@dataclass(frozen=True)
class ServerSpec:
    serve_name: str  # what docker_serve.sh takes; ACOUSTICBENCH_<SERVE_NAME>_ENDPOINT
    display_name: str  # the registry's model name (run.py --model)
    kind: Literal["vllm", "transformers"]
    repo_id: str  # Hugging Face repo of the weights
    port: int  # fixed default host port, so endpoints stay the same from one start to the next
    gpu_memory_gb: int  # 0: runs on the CPU, no GPU requested
    serve_args: tuple[str, ...] = ()  # vLLM: arguments after the repo id; ours: arguments of hf_server
    gated: bool = False  # the Hub asks for a token and accepted terms before download
    start_timeout_s: int = 1800  # the first start downloads the weights
    lora: str | None = None  # ours: a LoRA adapter folder name under <archive>/lora/
    recipe: Image | None = None  # the image it runs in, with its pins (models/images.py); None: its kind's usual one
    built_in: bool = False  # the tiny checkpoint, built in code: mounted into vLLM's CPU image, or run by --local

    @property
    def adapter(self) -> str:
        """The hf_server --model value of a transformers-served model."""
        return self.serve_name if self.lora is None else "kimi_audio_7b_instruct"

    @property
    def image(self) -> str:
        return image_for(self)[0]

    @property
    def image_recipe(self) -> Image:
        return self.recipe or IMAGES["vllm" if self.kind == "vllm" else "server"]


def _spec(model: OpenWeight) -> ServerSpec:
    vllm = model.server == "vllm"
    args = (*limit_mm(model), *GREEDY_AS_VLLM_MEANS_IT, *model.serve_args) if vllm else model.serve_args
    return ServerSpec(model.serve_name, model.name, model.server, model.repo_id, model.port, model.gpu_memory_gb,
                      args, start_timeout_s=model.start_timeout_s, recipe=model.image, built_in=model.built_in)


# gated=True where the Hub asks for an access request before download; none is marked, as far as known (not
# checkable from an offline machine): a 401 during start is still diagnosed from the log. A token, when present,
# is passed to every model (it also raises the Hub's download rate limits).
SPECS: dict[str, ServerSpec] = {m.serve_name: _spec(m) for m in OPEN_WEIGHT}  # the one table, models/open_weight.py
LORA_PREFIX = lora.SERVE_PREFIX


def lora_spec(serve_name: str, archive: Path) -> ServerSpec:
    """kimi_lora_<name>: Kimi-Audio-7B-Instruct with the adapter in <archive>/lora/<name>/ merged in (models/lora.py)."""
    name = serve_name[len(LORA_PREFIX):]
    model = lora.lora_model(name)
    lora.require_adapter(archive, name)
    return replace(_spec(model), lora=name)


def all_specs(archive: Path) -> list[ServerSpec]:
    return list(SPECS.values()) + [lora_spec(LORA_PREFIX + n, archive) for n in lora.lora_names(archive)]


def get_spec(serve_name: str, archive: Path) -> ServerSpec:
    if serve_name.startswith(LORA_PREFIX):
        return lora_spec(serve_name, archive)
    if serve_name not in SPECS:
        raise unknown_name("model to serve", serve_name, [s.serve_name for s in all_specs(archive)]
                           + [LORA_PREFIX + "<name>"])
    return SPECS[serve_name]


@lru_cache(maxsize=8)
def _source_hash(dockerfile: str, with_our_code: bool, reads: tuple[str, ...] = ()) -> str:
    """A hash of the files a build reads (its Dockerfile, the files of ours it copies, and our sources where the image
    copies them), so an image is rebuilt when any of them changes."""
    paths = [REPO / dockerfile, *(REPO / r for r in reads)]
    if with_our_code:
        paths += [REPO / "pyproject.toml", *(REPO / "acousticbench").rglob("*.py")]
    digest = hashlib.sha256()
    for path in sorted(p for p in paths if p.is_file()):
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def image_for(spec: ServerSpec) -> tuple[str, str, str | None]:
    """(image tag, Dockerfile path relative to the repo, build target); the tag is a short hash of the image's pins
    and the files its build reads, so it changes with any of them."""
    recipe = spec.image_recipe
    pins = "".join(f"{k}={v}\n" for k, v in sorted(recipe.build_args.items()))
    sources = _source_hash(recipe.dockerfile, spec.kind == "transformers", recipe.reads)  # ours copy our code
    tag = hashlib.sha256((sources + pins).encode()).hexdigest()[:12]
    return f"acousticbench/{recipe.name}:{tag}", recipe.dockerfile, recipe.target


def container_name(spec: ServerSpec) -> str:
    return "acousticbench-" + spec.serve_name.replace("_", "-").replace(".", "-").lower()


def parse_gpus(gpus: str) -> dict[str, Any]:
    """'all' -> every GPU; '0' or '0,1' (or 'device=0,1') -> those GPU ids."""
    text = gpus.strip().removeprefix("device=")
    if text == "all":
        return {"count": -1, "capabilities": [["gpu"]]}
    ids = [i.strip() for i in text.split(",")]
    if not ids or not all(i.isdigit() for i in ids):
        raise UserError(f"--gpus {gpus!r}: give all, or GPU ids such as 0 or 0,1 (as nvidia-smi numbers them).")
    return {"device_ids": ids, "capabilities": [["gpu"]]}


def command_for(spec: ServerSpec, tp: int | None, dp: int | None = None, network: str = "bridge",
                port: int = CONTAINER_PORT) -> list[str]:
    """The container's command: `vllm serve` arguments (--tp splits one replica over GPUs, --dp runs replicas behind
    the one endpoint, vLLM's data parallel), or our transformers server. On the host's network the server binds
    127.0.0.1 and the host port itself; on a bridge, 0.0.0.0:8000 inside the container, published on 127.0.0.1."""
    bind = ["--host", "127.0.0.1", "--port", str(port)] if network == "host" else ["--host", "0.0.0.0", "--port",
                                                                                    str(CONTAINER_PORT)]
    if spec.kind == "vllm":
        if spec.built_in:  # vLLM's CPU image: its entrypoint is the API server module, which takes --model
            from acousticbench.serve.tiny_checkpoint import MODEL_ID

            model = ["--model", CONTAINER_CHECKPOINT, "--served-model-name", MODEL_ID]
        else:
            model = [spec.repo_id]
        command = [*model, *bind, *spec.serve_args, "--middleware", MIDDLEWARE]  # /v1/models names the image
        return (command + (["--tensor-parallel-size", str(tp)] if tp else [])
                + (["--data-parallel-size", str(dp)] if dp else []))
    if tp or dp:
        flag = "--tp" if tp else "--dp"
        raise UserError(f"{flag} applies to the vLLM models; {spec.serve_name} runs on our transformers server, one GPU "
                        "(serve more with one container per GPU and several endpoints in its variable).")
    command = ["python", "-m", "acousticbench.serve.hf_server", "--model", spec.adapter, *bind, *spec.serve_args]
    return command + (["--lora", f"/lora/{spec.lora}"] if spec.lora else [])


def container_settings(spec: ServerSpec, *, port: int, gpus: str, tp: int | None, token: str | None,
                       home: Path, archive: Path, dp: int | None = None, network: str = "bridge") -> dict[str, Any]:
    """Keyword arguments of the docker SDK's containers.run(); device requests as plain dicts. `network` "host": no
    published port (an engine without a bridge has none to publish), the server on the host's 127.0.0.1:port."""
    volumes = {str(home / ".cache" / "huggingface"): {"bind": CONTAINER_HF_CACHE, "mode": "rw"}}
    if spec.kind == "vllm":  # its compiled graphs: a later start skips torch.compile (minutes on a CPU)
        volumes[str(home / ".cache" / "vllm")] = {"bind": CONTAINER_VLLM_CACHE, "mode": "rw"}
    if spec.built_in and spec.kind == "vllm":
        from acousticbench.serve.tiny_checkpoint import checkpoint_path

        volumes[str(checkpoint_path())] = {"bind": CONTAINER_CHECKPOINT, "mode": "ro"}
    if spec.kind == "transformers":
        volumes[str(home / ".cache" / "acousticbench")] = {"bind": CONTAINER_OUR_CACHE, "mode": "rw"}
    if spec.lora:
        volumes[str((archive / "lora" / spec.lora).resolve())] = {"bind": f"/lora/{spec.lora}", "mode": "ro"}
    need = (tp or 1) * (dp or 1)
    if need > 1 and gpus.strip() != "all" and len(parse_gpus(gpus)["device_ids"]) < need:
        raise UserError(f"--tp {tp or 1} x --dp {dp or 1} needs {need} GPUs but --gpus {gpus} names fewer.")
    environment = dict(CPU_ENV) if spec.kind == "vllm" and not spec.gpu_memory_gb else {}
    if token:
        environment["HF_TOKEN"] = token  # by environment only: never in an image layer
    reach = ({"network_mode": "host"} if network == "host"  # the server binds 127.0.0.1 itself (command_for)
             else {"ports": {f"{CONTAINER_PORT}/tcp": ("127.0.0.1", port)}})  # this machine only: servers have no auth
    return {
        "image": spec.image,
        "command": command_for(spec, tp, dp, network, port),
        "name": container_name(spec),
        "detach": True,
        "labels": {"acousticbench.model": spec.serve_name, "acousticbench.port": str(port)},
        **reach,
        "device_requests": [parse_gpus(gpus)] if spec.gpu_memory_gb else [],
        "ipc_mode": "host",  # PyTorch workers share tensors through /dev/shm
        "volumes": volumes,
        "environment": environment,
    }


def redacted(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings with every secret value replaced, for printing."""
    env = {k: (REDACTED if "TOKEN" in k or "KEY" in k else v) for k, v in settings["environment"].items()}
    return {**settings, "environment": env}
