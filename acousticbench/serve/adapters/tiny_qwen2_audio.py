"""Tiny-Qwen2-Audio: the real Qwen2-Audio architecture with small random weights, loaded from the checkpoint
serve/tiny_checkpoint.py builds in code (the one real vLLM serves as Tiny-Qwen2-Audio-vLLM)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from acousticbench.core.errors import UserError
from acousticbench.serve.adapters import Chat, Generation, decoding_of, finish_reason
from acousticbench.serve.lora import merged_model_dir
from acousticbench.serve.tiny_checkpoint import MODEL_ID, VOCAB, checkpoint_dir

if TYPE_CHECKING:  # transformers is imported where the model is loaded: its import is slow
    from transformers import Qwen2AudioForConditionalGeneration

DEVICE_VARIABLE = "ACOUSTICBENCH_DEVICE"  # cpu (default), or cuda: scripts/gpu_check.sh runs it on the GPU


def device() -> str:
    """Where the model runs; asking for CUDA where torch sees none is an error, never a silent CPU run."""
    name = os.environ.get(DEVICE_VARIABLE, "cpu").strip() or "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"{DEVICE_VARIABLE}={name} but torch {torch.__version__} sees no CUDA GPU.")
    return name


def _load(folder: Path) -> Qwen2AudioForConditionalGeneration:
    from transformers import Qwen2AudioForConditionalGeneration
    from transformers.utils import logging

    logging.disable_progress_bar()  # a bar per load would fill the server's log, which says one line per event
    return Qwen2AudioForConditionalGeneration.from_pretrained(folder).eval()


def generate_arguments(max_tokens: int) -> dict:
    """transformers' generate() arguments by their own names: greedy is do_sample=False with one beam."""
    return {"do_sample": False, "num_beams": 1, "max_new_tokens": max_tokens}


def chat_messages(chat: Chat) -> list[dict]:
    """The request as the chat template takes it: audio parts as {"type": "audio"}, as vLLM hands them over."""
    return [{"role": turn.role, "content": [{"type": "text", "text": part} if isinstance(part, str) else
                                            {"type": "audio"} for part in turn.parts]} for turn in chat.turns]


class TinyQwen2Audio:
    """Greedy, deterministic, and fast on a CPU; its answers mean nothing."""

    decoding = decoding_of(generate_arguments(1), "max_new_tokens")
    logprobs = True

    def __init__(self, lora: Path | None = None):
        from transformers import AutoProcessor, GenerationConfig

        folder = checkpoint_dir()
        self.processor = AutoProcessor.from_pretrained(folder)
        self.tokenizer = self.processor.tokenizer
        self.model_id = MODEL_ID
        if lora is None:
            self.model = _load(folder)
        else:
            self.model = _load(merged_model_dir(folder, lora, _load, need_gb=0.1))
            self.model_id += f"+lora-{lora.name}"
        # the checkpoint's generation_config.json samples (as released checkpoints do): replaced, never merged in,
        # so greedy here is what vLLM's --generation-config vllm gives
        self.eos = VOCAB["<|im_end|>"]
        self.model.generation_config = GenerationConfig(eos_token_id=self.eos, pad_token_id=VOCAB["<|endoftext|>"])
        self.device = device()
        self.model.to(self.device)

    def generate(self, chat: Chat) -> Generation:
        text = self.processor.apply_chat_template(chat_messages(chat), tokenize=False, add_generation_prompt=True)
        inputs = self.processor(text=text, audio=chat.clips or None, sampling_rate=16_000,
                                return_tensors="pt").to(self.device)
        if chat.seed is not None:
            torch.manual_seed(chat.seed)  # accepted as the API does; greedy decoding does not draw from it
        with torch.inference_mode():
            out = self.model.generate(**inputs, **generate_arguments(chat.max_tokens), return_dict_in_generate=True,
                                      output_logits=chat.top_logprobs is not None)
        prompt_len = inputs["input_ids"].shape[1]
        new = out.sequences[0, prompt_len:].tolist()
        stopped = bool(new) and new[-1] == self.eos
        return Generation(text=self.tokenizer.decode(new, skip_special_tokens=True), prompt_tokens=prompt_len,
                          completion_tokens=len(new), finish_reason=finish_reason(len(new), chat.max_tokens, stopped),
                          logprobs=self._logprobs(new, out.logits, chat.top_logprobs) if out.logits else None)

    def _logprobs(self, new: list[int], logits: tuple, top: int | None) -> list[dict]:
        """OpenAI's logprobs.content: each generated token with the `top` likeliest, from the raw logits (as vLLM's
        default raw_logprobs mode gives them)."""
        entries = []
        for token, step in zip(new, logits):
            logp = torch.log_softmax(step[0].float(), dim=-1)
            best = torch.topk(logp, min(top or 0, logp.numel()))
            alternatives = [{"token": self.tokenizer.decode([i]), "logprob": float(v)}
                            for v, i in zip(best.values.tolist(), best.indices.tolist())]
            entries.append({"token": self.tokenizer.decode([token]), "logprob": float(logp[token]),
                            "top_logprobs": alternatives})
        return entries
