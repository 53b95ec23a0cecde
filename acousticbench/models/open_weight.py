"""The one table of open-weight models: what run.py needs to ask one and what docker_serve.sh needs to serve it.
models/registry.py makes the run.py models of it; serve/specs.py the container settings."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class OpenWeight:
    name: str  # run.py --model
    serve_name: str  # docker_serve.sh NAME; ACOUSTICBENCH_<SERVE_NAME>_ENDPOINT
    server: Literal["vllm", "transformers"]  # vLLM's image, or our transformers server
    repo_id: str  # Hugging Face repo of the weights
    port: int  # fixed default host port, so endpoints stay the same from one start to the next
    gpu_memory_gb: int  # 0: runs on the CPU, no GPU requested
    description: str
    serve_args: tuple[str, ...] = ()  # vLLM: arguments after the repo id
    start_timeout_s: int = 1800  # the first start downloads the weights
    concurrency: int | None = None  # requests in flight by default; None: the backend's (32)
    single_audio: bool = False  # takes one audio input: clips merged with 1 s of silence

    @property
    def gpu(self) -> str:
        return f"GPU, {self.gpu_memory_gb} GB" if self.gpu_memory_gb else "CPU"


# our transformers server answers one request at a time: a few in flight keep it busy without timeouts
_ONE_AT_A_TIME = 4

OPEN_WEIGHT: tuple[OpenWeight, ...] = (
    OpenWeight("Voxtral-Mini-3B", "voxtral_mini_3b", "vllm", "mistralai/Voxtral-Mini-3B-2507", 8009, 16,
               "Mistral Voxtral Mini 3B (mistralai/Voxtral-Mini-3B-2507), vLLM",
               ("--tokenizer_mode", "mistral", "--config_format", "mistral", "--load_format", "mistral")),
    OpenWeight("Qwen2-Audio-7B-Instruct", "qwen2_audio_7b_instruct", "vllm", "Qwen/Qwen2-Audio-7B-Instruct", 8010, 24,
               "Qwen/Qwen2-Audio-7B-Instruct, vLLM"),
    OpenWeight("Qwen2.5-Omni-7B", "qwen2_5_omni_7b", "vllm", "Qwen/Qwen2.5-Omni-7B", 8011, 24,
               "Qwen/Qwen2.5-Omni-7B (thinker, text out), vLLM"),
    # our prompts stay far under 32k tokens; a shorter context leaves more of the GPU to the KV cache
    OpenWeight("Qwen3-Omni-30B-A3B-Instruct", "qwen3_omni_30b_a3b_instruct", "vllm", "Qwen/Qwen3-Omni-30B-A3B-Instruct",
               8012, 80, "Qwen/Qwen3-Omni-30B-A3B-Instruct (thinker, text out), vLLM", ("--max-model-len", "32768"),
               start_timeout_s=3600),
    OpenWeight("Kimi-Audio-7B-Instruct", "kimi_audio_7b_instruct", "transformers", "moonshotai/Kimi-Audio-7B-Instruct",
               8013, 40, "moonshotai/Kimi-Audio-7B-Instruct, our transformers server", concurrency=_ONE_AT_A_TIME),
    OpenWeight("MiniCPM-o-4.5", "minicpm_o_4_5", "transformers", "openbmb/MiniCPM-o-4_5", 8014, 24,
               "openbmb/MiniCPM-o-4_5, one audio input: clips merged with 1 s of silence",
               concurrency=_ONE_AT_A_TIME, single_audio=True),
    # local: runs on this CPU with no GPU, key or container; run.py starts and stops its server itself
    OpenWeight("Tiny-Qwen2-Audio", "tiny_qwen2_audio", "transformers", "(built in code, no download)", 8015, 0,
               "real Qwen2-Audio architecture, small random weights, on our transformers server: "
               "exercises the open-weight path; its answers mean nothing", start_timeout_s=300),
)
BY_SERVE_NAME = {m.serve_name: m for m in OPEN_WEIGHT}
