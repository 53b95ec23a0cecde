"""Kimi-Audio-7B-Instruct through Moonshot's kimia_infer, and its LoRA finetunes merged into it once."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch

from acousticbench.core.audio import write_wav
from acousticbench.core.errors import UserError
from acousticbench.models.lora import MERGE_DISK_GB  # the one number docker_serve.sh checks before the first start
from acousticbench.serve.adapters import Chat, Generation, decoding_of, finish_reason
from acousticbench.serve.lora import merged_model_dir

REPO_ID = "moonshotai/Kimi-Audio-7B-Instruct"


def generate_arguments(max_tokens: int) -> dict:
    """KimiAudio.generate()'s arguments in kimia_infer's own names, greedy: its sampler takes the argmax for a
    temperature <= 1e-6 (kimia_infer/utils/sampler.py), no repetition penalty (1.0), text out only."""
    return {"output_type": "text", "text_temperature": 0.0, "audio_temperature": 0.0, "text_repetition_penalty": 1.0,
            "audio_repetition_penalty": 1.0, "max_new_tokens": max_tokens}


DECODING = decoding_of(generate_arguments(1), "max_new_tokens", "output_type")


def _load_alm(folder: Path):
    """The audio-language model alone (what a LoRA adapter targets), on the CPU, in the dtype kimia_infer uses."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.bfloat16, trust_remote_code=True)


class KimiAudioInstruct:
    """kimia_infer takes audio as file paths and one request at a time; the server's lock gives it that."""

    decoding = DECODING

    def __init__(self, lora: Path | None = None):
        try:
            from kimia_infer.api.kimia import KimiAudio
        except ImportError:
            raise UserError("Kimi-Audio needs kimia_infer (github.com/MoonshotAI/Kimi-Audio): use the image that "
                            "docker_serve.sh builds (docker/transformers/Dockerfile, target kimi).") from None
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(REPO_ID))
        self.model_id = REPO_ID
        if lora is not None:
            folder = merged_model_dir(folder, lora, _load_alm, need_gb=MERGE_DISK_GB)
            self.model_id = f"{REPO_ID}+lora-{lora.name}"
        self.attach(KimiAudio(model_path=str(folder), load_detokenizer=False))  # text out only
        self.tmp = Path(tempfile.mkdtemp(prefix="kimi-clips-"))

    def attach(self, model) -> None:
        """Use `model`, counting the text tokens of each generation: generate() returns only the decoded text, and
        its _generate_loop (kimia_infer/api/kimia.py at the pinned commit) returns the text tokens before the end
        token, all max_new_tokens of them when the end never came, which is how "length" is told from "stop"."""
        loop = model._generate_loop

        def counted(*args, **kwargs):
            audio_tokens, text_tokens = loop(*args, **kwargs)
            self.last_count = (len(text_tokens), kwargs.get("max_new_tokens"))
            return audio_tokens, text_tokens

        model._generate_loop = counted
        self.model, self.last_count = model, (0, None)

    def _messages(self, chat: Chat) -> list[dict]:
        messages, n = [], 0
        for turn in chat.turns:
            for part in turn.parts:
                if isinstance(part, str):
                    messages.append({"role": turn.role, "message_type": "text", "content": part})
                else:
                    n += 1
                    path = self.tmp / f"clip{n}.wav"
                    write_wav(path, part, 16_000)
                    messages.append({"role": turn.role, "message_type": "audio", "content": str(path)})
        return messages

    def generate(self, chat: Chat) -> Generation:
        if chat.seed is not None:
            torch.manual_seed(chat.seed)
        try:
            _, text = self.model.generate(self._messages(chat), **generate_arguments(chat.max_tokens))
        finally:
            for path in self.tmp.glob("clip*.wav"):
                os.remove(path)
        new_tokens, limit = self.last_count
        # kimia_infer reports no prompt token count: usage says 0 for it rather than guess
        return Generation(text=text, prompt_tokens=0, completion_tokens=new_tokens,
                          finish_reason=finish_reason(new_tokens, limit or chat.max_tokens))
