"""What a model adapter of our transformers server is, and the table of adapters (imported only when selected)."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Union

import numpy as np

from acousticbench.core.errors import UserError, unknown_name

Part = Union[str, np.ndarray]  # text, or mono float32 samples at 16 kHz


@dataclass(frozen=True)
class Turn:
    role: str  # system | user | assistant
    parts: list[Part]  # in the order the request gave them


@dataclass(frozen=True)
class Chat:
    turns: list[Turn]
    max_tokens: int
    seed: int | None = None
    top_logprobs: int | None = None  # logprobs asked: each generated token's likeliest alternatives, this many

    @property
    def clips(self) -> list[np.ndarray]:
        return [p for t in self.turns for p in t.parts if isinstance(p, np.ndarray)]


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str = "stop"  # stop | length
    logprobs: list[dict] | None = None  # OpenAI's logprobs.content, where the request asked for logprobs


def finish_reason(new_tokens: int, max_tokens: int, stopped: bool = False) -> str:
    """OpenAI's finish_reason: "length" when generation ran to the token limit without its end token; `stopped`: the
    adapter saw the end token itself."""
    return "stop" if stopped or new_tokens < max_tokens else "length"


def decoding_of(arguments: dict, *not_decoding: str) -> dict:
    """What an adapter reports as its decoding: the arguments it passes, less the per-request and output ones named,
    so the report cannot drift from what is passed."""
    return {k: v for k, v in arguments.items() if k not in not_decoding}


class Adapter(Protocol):
    """One loaded model. generate() is called one request at a time (the server holds a lock), greedy."""

    model_id: str  # what /v1/models and every response report
    decoding: dict  # the decoding arguments it passes, in its vendor's own names; /v1/models reports them
    # (optional) logprobs = True: it fills Generation.logprobs when the request asks for them

    def generate(self, chat: Chat) -> Generation: ...


# hf_server --model NAME -> "module:Class"; the module (and torch with it) is imported only for the chosen model
ADAPTERS = {
    "tiny_qwen2_audio": "acousticbench.serve.adapters.tiny_qwen2_audio:TinyQwen2Audio",
    "kimi_audio_7b_instruct": "acousticbench.serve.adapters.kimi_audio:KimiAudioInstruct",
    "minicpm_o_4_5": "acousticbench.serve.adapters.minicpm_o:MiniCPMo",
}


def adapter_key(name: str) -> str:
    """'Tiny-Qwen2-Audio', 'tiny-qwen2-audio' and 'tiny_qwen2_audio' name the same adapter."""
    return name.strip().lower().replace("-", "_").replace(".", "_")


def load_adapter(name: str, lora: Path | None = None) -> Adapter:
    key = adapter_key(name)
    if key not in ADAPTERS:
        raise unknown_name("server model", name, list(ADAPTERS))
    if lora is not None and not (lora / "adapter_config.json").is_file():
        raise UserError(f"--lora {lora}: no adapter_config.json there; give a PEFT adapter folder.")
    module, cls = ADAPTERS[key].split(":")
    return getattr(importlib.import_module(module), cls)(lora=lora)
