"""Kimi-Audio-7B-Instruct through Moonshot's kimia_infer, and its LoRA finetunes merged into it once."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch

from acousticbench.audio import write_wav
from acousticbench.errors import UserError
from acousticbench.serve.adapters import Chat, Generation
from acousticbench.serve.lora import merged_model_dir

REPO_ID = "moonshotai/Kimi-Audio-7B-Instruct"
MERGE_DISK_GB = 60  # the merged ALM saved beside links to the base snapshot, plus room to write it


def _load_alm(folder: Path):
    """The audio-language model alone (what a LoRA adapter targets), on the CPU, in the dtype kimia_infer uses."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.bfloat16, trust_remote_code=True)


class KimiAudioInstruct:
    """kimia_infer takes audio as file paths and one request at a time; the server's lock gives it that."""

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
        self.model = KimiAudio(model_path=str(folder), load_detokenizer=False)  # text out only
        self.tmp = Path(tempfile.mkdtemp(prefix="kimi-clips-"))

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
            _, text = self.model.generate(self._messages(chat), output_type="text", text_temperature=0.0,
                                          audio_temperature=0.0, max_new_tokens=chat.max_tokens)
        finally:
            for path in self.tmp.glob("clip*.wav"):
                os.remove(path)
        # kimia_infer reports no token counts, and its tokenizer is its own: usage says 0 rather than guess
        return Generation(text=text, prompt_tokens=0, completion_tokens=0)
