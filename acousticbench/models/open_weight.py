"""The one table of open-weight models: what run.py needs to ask one and what docker_serve.sh needs to serve it.
catalog.py makes the run.py models of it; serve/specs.py the container settings."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from acousticbench.models.audio_tokens import (KIMI_AUDIO, MINICPM_O_4_5, QWEN2_5_OMNI, QWEN2_AUDIO, QWEN3_OMNI, VOXTRAL,
                                               AudioTokens)
from acousticbench.models.images import IMAGES, Image
from acousticbench.models.limits import Limits


@dataclass(frozen=True)
class OpenWeight:
    name: str  # run.py --model
    serve_name: str  # docker_serve.sh NAME; ACOUSTICBENCH_<SERVE_NAME>_ENDPOINT
    server: Literal["vllm", "transformers"]  # vLLM's image, or our transformers server
    repo_id: str  # Hugging Face repo of the weights
    port: int  # fixed default host port, so endpoints stay the same from one start to the next
    gpu_memory_gb: int  # 0: runs on the CPU, no GPU requested
    description: str
    image: Image  # the container it is served from, with its pins (models/images.py)
    limits: Limits = field(default_factory=Limits)  # what one request may carry; merge or refuse beyond it
    serve_args: tuple[str, ...] = ()  # vLLM: arguments after the repo id
    start_timeout_s: int = 1800  # the first start downloads the weights
    concurrency: int | None = None  # requests in flight by default; None: the backend's (32)
    channels: int | None = None  # how many audio channels the model hears: 1 (mono), 2, or None (unknown)
    system: str | None = None  # the system prompt the vendor's examples set; None: the model's own default
    text_first: bool = False  # the instruction before the clips, as the vendor's examples order a turn
    built_in: bool = False  # the weights are built in code (the tiny checkpoint), not downloaded
    logprobs: bool = True  # the server returns token logprobs (vLLM and our Tiny adapter do): --judge logprobs
    audio_tokens: AudioTokens | None = None  # how its server counts a second of audio (audio_tokens.unknown: no source)

    @property
    def gpu(self) -> str:
        return f"GPU, {self.gpu_memory_gb} GB" if self.gpu_memory_gb else "CPU"


# our transformers server answers one request at a time: a few in flight keep it busy without timeouts
_ONE_AT_A_TIME = 4
# The most clips a vLLM server is started to take (--limit-mm-per-prompt): AudioICL k=5 operator episodes carry
# 3k+3 = 18 clips, plus the 26-clip Morse alphabet bank = 44; 48 leaves headroom without growing vLLM's start-up
# memory profile much (it reserves room for that many clips per prompt).
_VLLM_AUDIO = Limits(audio_items=48, why="vLLM's --limit-mm-per-prompt, as docker_serve.sh starts it")
# Qwen2-Audio's Whisper feature extractor takes 30 s windows (chunk_length 30): a longer clip would be cut
# vLLM 0.32 decodes every audio item with vllm/multimodal/media/audio.py load_audio(..., mono=True): channels averaged
_VLLM_MONO = 1
# our transformers server mixes every clip to mono (serve/chat_request.py: samples.mean(axis=1)) before the model
_SERVER_MONO = 1
_WHISPER_30S = Limits(audio_items=48, clip_s=30.0, why="Whisper-style 30 s input window; vLLM started for 48 clips")
# QwenLM/Qwen2.5-Omni README.md: every example's conversation opens with this system turn
QWEN_OMNI_SYSTEM = ("You are Qwen, a virtual human developed by the Qwen Team, Alibaba Group, capable of perceiving "
                    "auditory and visual inputs, as well as generating text and speech.")
# vLLM on a CPU (the tiny checkpoint): one process, fp32 (tests compare it with transformers), a short context
_VLLM_CPU_ARGS = ("--dtype", "float32", "--max-model-len", "4096", "--distributed-executor-backend", "uni")

OPEN_WEIGHT: tuple[OpenWeight, ...] = (
    # vLLM issue #22109 (open): Voxtral refuses more than 5 audio items per request whatever --limit-mm-per-prompt says;
    # the model card: 40 minutes of audio for understanding. Refused, not merged: 44 clips glued into one would no
    # longer match the prompt text that names each clip, so it would be a different task.
    OpenWeight("Voxtral-Mini-3B", "voxtral_mini_3b", "vllm", "mistralai/Voxtral-Mini-3B-2507", 8009, 16,
               "Mistral Voxtral Mini 3B (mistralai/Voxtral-Mini-3B-2507), vLLM", IMAGES["vllm"],
               Limits(audio_items=5, clip_s=2400.0, over="refuse", why="vLLM issue #22109; 40 min of audio per the model card"),
               ("--tokenizer_mode", "mistral", "--config_format", "mistral", "--load_format", "mistral"),
               channels=_VLLM_MONO, audio_tokens=VOXTRAL),
    OpenWeight("Qwen2-Audio-7B-Instruct", "qwen2_audio_7b_instruct", "vllm", "Qwen/Qwen2-Audio-7B-Instruct", 8010, 24,
               "Qwen/Qwen2-Audio-7B-Instruct, vLLM", IMAGES["vllm"], _WHISPER_30S, channels=_VLLM_MONO,
               audio_tokens=QWEN2_AUDIO),
    OpenWeight("Qwen2.5-Omni-7B", "qwen2_5_omni_7b", "vllm", "Qwen/Qwen2.5-Omni-7B", 8011, 24,
               "Qwen/Qwen2.5-Omni-7B (thinker, text out), vLLM", IMAGES["vllm"], _VLLM_AUDIO, system=QWEN_OMNI_SYSTEM,
               channels=_VLLM_MONO, audio_tokens=QWEN2_5_OMNI),
    # our prompts stay far under 32k tokens; a shorter context leaves more of the GPU to the KV cache. No system turn:
    # QwenLM/Qwen3-Omni README.md ("Usage Tips") recommends its voice-assistant system prompt for audio-visual
    # interaction with spoken replies only; its audio-understanding examples send the user turn alone
    OpenWeight("Qwen3-Omni-30B-A3B-Instruct", "qwen3_omni_30b_a3b_instruct", "vllm", "Qwen/Qwen3-Omni-30B-A3B-Instruct",
               8012, 80, "Qwen/Qwen3-Omni-30B-A3B-Instruct (thinker, text out), vLLM", IMAGES["vllm"], _VLLM_AUDIO,
               ("--max-model-len", "32768"), start_timeout_s=3600, channels=_VLLM_MONO, audio_tokens=QWEN3_OMNI),
    # text first: MoonshotAI/Kimi-Audio README.md and kimia_infer/api/kimia.py put the instruction message before the
    # audio ("content and instruction cannot swap positions"). kimia_infer takes any number of audio messages; no
    # clip limit is stated, none is assumed
    OpenWeight("Kimi-Audio-7B-Instruct", "kimi_audio_7b_instruct", "transformers", "moonshotai/Kimi-Audio-7B-Instruct",
               8013, 40, "moonshotai/Kimi-Audio-7B-Instruct, our transformers server", IMAGES["kimi"],
               concurrency=_ONE_AT_A_TIME, text_first=True, logprobs=False, channels=_SERVER_MONO,
               audio_tokens=KIMI_AUDIO),
    # text first: OpenBMB/MiniCPM-o README.md, MiniCPM-o 4.5 audio understanding, sends content [task_prompt, audio].
    # Merged, as the paper did: one audio input, so every prompt's clips become one with 1 s of silence between
    OpenWeight("MiniCPM-o-4.5", "minicpm_o_4_5", "transformers", "openbmb/MiniCPM-o-4_5", 8014, 24,
               "openbmb/MiniCPM-o-4_5, one audio input: clips merged with 1 s of silence", IMAGES["minicpm"],
               Limits(audio_items=1, over="merge", why="one audio input per request, as the paper ran it"),
               concurrency=_ONE_AT_A_TIME, text_first=True, logprobs=False, channels=_SERVER_MONO,
               audio_tokens=MINICPM_O_4_5),
    # local: runs on this CPU with no GPU, key or container; run.py starts and stops its server itself
    OpenWeight("Tiny-Qwen2-Audio", "tiny_qwen2_audio", "transformers", "(built in code, no download)", 8015, 0,
               "real Qwen2-Audio architecture, small random weights, on our transformers server: "
               "exercises the open-weight path; its answers mean nothing", IMAGES["server"],
               Limits(clip_s=30.0, why="its 30 s Whisper window (serve/tiny_checkpoint.py)"), start_timeout_s=300,
               built_in=True, channels=_SERVER_MONO, audio_tokens=QWEN2_AUDIO),
    # the same checkpoint (serve/tiny_checkpoint.py) on real vLLM on the CPU: from .venv-vllm (scripts/setup_vllm.sh),
    # or in vLLM's CPU image with the checkpoint mounted
    OpenWeight("Tiny-Qwen2-Audio-vLLM", "tiny_qwen2_audio_vllm", "vllm", "(built in code, no download)", 8016, 0,
               "the Tiny-Qwen2-Audio checkpoint on real vLLM (.venv-vllm, CPU): vLLM's flags, template and "
               "multimodal limits; its answers mean nothing", IMAGES["vllm-cpu"], _WHISPER_30S, _VLLM_CPU_ARGS,
               start_timeout_s=600, built_in=True, channels=_VLLM_MONO, audio_tokens=QWEN2_AUDIO),
)
BY_SERVE_NAME = {m.serve_name: m for m in OPEN_WEIGHT}
