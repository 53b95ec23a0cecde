"""The registry: display name -> backend class (imported lazily) and what the model needs to run."""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from acousticbench.errors import unknown_name


@dataclass(frozen=True)
class ModelEntry:
    name: str
    backend: str  # "module:Class", imported only when the model is used, so --help stays fast
    family: str  # local | api | open-weight
    needs: str  # what the user must provide, in words
    description: str
    settings: dict[str, Any] = field(default_factory=dict)  # passed to the backend's constructor

    def create(self, **overrides: Any):
        """The backend object; `overrides` (from flags such as --endpoint) win over the registry settings."""
        module, cls = self.backend.split(":")
        settings = {**self.settings, **{k: v for k, v in overrides.items() if v is not None}}
        return getattr(importlib.import_module(module), cls)(self.name, **settings)


def endpoint_variable(serve_name: str) -> str:
    """'voxtral_mini_3b' -> 'ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT'."""
    return f"ACOUSTICBENCH_{serve_name.upper()}_ENDPOINT"


_OPENAI = "acousticbench.models.openai_api:OpenAIAudio"
_GEMINI = "acousticbench.models.gemini:Gemini"
_CASCADE = "acousticbench.models.cascade:Cascade"
_SERVED = "acousticbench.models.openai_compat:ServedModel"


def _openai(name: str, api_model: str, description: str, **settings: Any) -> ModelEntry:
    return ModelEntry(name, _OPENAI, "api", "OPENAI_API_KEY", description, {"api_model": api_model, **settings})


def _gemini(name: str, api_model: str, description: str) -> ModelEntry:
    return ModelEntry(name, _GEMINI, "api", "GEMINI_API_KEY or GOOGLE_API_KEY", description, {"api_model": api_model})


def _served(name: str, serve_name: str, gpu: str, description: str, **settings: Any) -> ModelEntry:
    """An open-weight model behind `./scripts/docker_serve.sh SERVE_NAME`; greedy decoding, the run seed passed."""
    needs = f"{endpoint_variable(serve_name)}, printed by ./scripts/docker_serve.sh {serve_name} ({gpu})"
    return ModelEntry(name, _SERVED, "open-weight", needs, description,
                      {"serve_name": serve_name, "temperature": 0.0, **settings})


MODELS: dict[str, ModelEntry] = {
    m.name: m
    for m in (
        ModelEntry("Oracle", "acousticbench.models.oracle:Oracle", "local", "nothing",
                   "ideal observer that measures the signal: the task's ceiling"),
        ModelEntry("Random", "acousticbench.models.baselines:RandomChoice", "local", "nothing",
                   "uniform A/B, seeded by the run seed and question id: chance level"),
        ModelEntry("Always-A", "acousticbench.models.baselines:AlwaysA", "local", "nothing",
                   "always answers A: exactly 0.5 on the balanced scored questions"),
        # local: runs on this CPU with no GPU, key or container; run.py starts and stops its server itself
        ModelEntry("Tiny-Qwen2-Audio", "acousticbench.models.local_server:LocalServer", "local",
                   'torch and the [hf-server] extra: pip install torch==2.13.0 -e ".[hf-server]"',
                   "real Qwen2-Audio architecture, small random weights, on our transformers server: "
                   "exercises the open-weight path; its answers mean nothing",
                   {"serve_name": "tiny_qwen2_audio", "temperature": 0.0, "max_tokens": 32}),
        # API models; the paper's ids may be retired: --api-model picks a current one
        _openai("GPT-4o", "gpt-4o-audio-preview", "the paper's GPT-4o (gpt-4o-audio-preview, retired 2026-05-07)",
                retired="2026-05-07"),
        _openai("GPT-Audio-Mini", "gpt-audio-mini", "OpenAI gpt-audio-mini (scheduled to retire 2027-01-20)"),
        _gemini("Gemini-3.1-Pro", "gemini-3.1-pro-preview", "the paper's Gemini 3.1 Pro (gemini-3.1-pro-preview)"),
        _gemini("Gemini-3-Flash", "gemini-3-flash-preview", "Gemini 3 Flash (gemini-3-flash-preview)"),
        ModelEntry("Cascade-Whisper-GPT-4o-mini", _CASCADE, "api", "OPENAI_API_KEY; pip install -e '.[stt]'",
                   "local faster-whisper tiny.en transcribes, gpt-4o-mini answers from the transcripts",
                   {"stt": "local", "text_model": "gpt-4o-mini"}),
        ModelEntry("Cascade-Transcribe-GPT-4o-mini", _CASCADE, "api", "OPENAI_API_KEY",
                   "gpt-4o-mini-transcribe (API) transcribes, gpt-4o-mini answers from the transcripts",
                   {"stt": "openai", "stt_model": "gpt-4o-mini-transcribe", "text_model": "gpt-4o-mini"}),
        # open-weight models, served over HTTP (vLLM, or our transformers server for Kimi and MiniCPM-o)
        _served("Voxtral-Mini-3B", "voxtral_mini_3b", "GPU, 16 GB",
                "Mistral Voxtral Mini 3B (mistralai/Voxtral-Mini-3B-2507), vLLM"),
        _served("Qwen2-Audio-7B-Instruct", "qwen2_audio_7b_instruct", "GPU, 24 GB",
                "Qwen/Qwen2-Audio-7B-Instruct, vLLM"),
        _served("Qwen2.5-Omni-7B", "qwen2_5_omni_7b", "GPU, 24 GB", "Qwen/Qwen2.5-Omni-7B (thinker, text out), vLLM"),
        _served("Qwen3-Omni-30B-A3B-Instruct", "qwen3_omni_30b_a3b_instruct", "GPU, 80 GB",
                "Qwen/Qwen3-Omni-30B-A3B-Instruct (thinker, text out), vLLM"),
        # our transformers server answers one request at a time: a few in flight keep it busy without timeouts
        _served("Kimi-Audio-7B-Instruct", "kimi_audio_7b_instruct", "GPU, 40 GB",
                "moonshotai/Kimi-Audio-7B-Instruct, our transformers server", concurrency=4),
        _served("MiniCPM-o-4.5", "minicpm_o_4_5", "GPU, 24 GB",
                "openbmb/MiniCPM-o-4_5, one audio input: clips merged with 1 s of silence", single_audio=True,
                concurrency=4),
    )
}


def get_model(name: str) -> ModelEntry:
    if name not in MODELS:
        raise unknown_name("model", name, list(MODELS))
    return MODELS[name]


def models_table() -> str:
    """One line per model (name, family, what it is), then what it needs, indented."""
    width = max(len(m.name) for m in MODELS.values())
    lines = []
    for m in MODELS.values():
        lines.append(f"{m.name.ljust(width)}  {m.family.ljust(11)}  {m.description}")
        lines.append(f"{'':{width}}  needs: {m.needs}")
    return "\n".join(lines)
