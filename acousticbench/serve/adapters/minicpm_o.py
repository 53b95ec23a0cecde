"""MiniCPM-o-4.5 through its remote code's model.chat(); it takes one audio input, so clips are merged."""
from __future__ import annotations

from pathlib import Path

import torch

from acousticbench.core.audio import merge_clips
from acousticbench.core.errors import UserError
from acousticbench.serve.adapters import Chat, Generation, decoding_of, finish_reason

REPO_ID = "openbmb/MiniCPM-o-4_5"
GAP_S = 1.0  # the same 1 s of silence the harness uses when it merges clips itself (models/wire.py)


def chat_arguments(max_tokens: int) -> dict:
    """model.chat()'s arguments in MiniCPM-o-4.5's own names. Its chat() defaults to do_sample=True and
    prepare_generation_config() to num_beams=3 (an older model's `sampling=` is swallowed by **kwargs), so greedy is
    do_sample=False, num_beams=1, as OpenBMB's audio example passes (OpenBMB/minicpm-o-4_5-pytorch-simple-demo
    @c7e1660, MiniCPMO45/README.md and modeling_minicpmo.py); text out, no thinking."""
    return {"do_sample": False, "num_beams": 1, "max_new_tokens": max_tokens, "use_tts_template": True,
            "enable_thinking": False, "generate_audio": False}


DECODING = decoding_of(chat_arguments(1), "max_new_tokens", "use_tts_template", "enable_thinking", "generate_audio")


class MiniCPMo:
    decoding = DECODING

    def __init__(self, lora: Path | None = None):
        if lora is not None:
            raise UserError("LoRA adapters are served for Kimi-Audio only; MiniCPM-o-4.5 takes none here.")
        from transformers import AutoModel, AutoTokenizer

        # audio in, text out: the vision tower and the TTS head are not loaded
        self.model = AutoModel.from_pretrained(REPO_ID, trust_remote_code=True, attn_implementation="sdpa",
                                               torch_dtype=torch.bfloat16, init_vision=False, init_audio=True,
                                               init_tts=False).eval().cuda()
        self.tokenizer = AutoTokenizer.from_pretrained(REPO_ID, trust_remote_code=True)
        self.model_id = REPO_ID

    @staticmethod
    def messages(chat: Chat) -> list[dict]:
        """MiniCPM-o's msgs: each turn's text parts, and its clips merged into one array where the first clip was."""
        msgs = []
        for turn in chat.turns:
            clips = [p for p in turn.parts if not isinstance(p, str)]
            content: list = []
            for part in turn.parts:
                if isinstance(part, str):
                    content.append(part)
                elif part is clips[0]:
                    content.append(merge_clips(clips, 16_000, GAP_S) if len(clips) > 1 else part)
            msgs.append({"role": turn.role, "content": content})
        return msgs

    def generate(self, chat: Chat) -> Generation:
        if chat.seed is not None:
            torch.manual_seed(chat.seed)
        with torch.inference_mode():
            text = self.model.chat(msgs=self.messages(chat), **chat_arguments(chat.max_tokens))
        if not isinstance(text, str):  # some versions return (text, audio) or a dict
            text = text[0] if isinstance(text, (list, tuple)) else str(text.get("text", text))
        tokens = len(self.tokenizer.encode(text, add_special_tokens=False))
        return Generation(text=text, prompt_tokens=0, completion_tokens=tokens,
                          finish_reason=finish_reason(tokens, chat.max_tokens))
