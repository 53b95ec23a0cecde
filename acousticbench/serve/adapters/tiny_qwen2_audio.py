"""Tiny-Qwen2-Audio: the real Qwen2-Audio architecture, small random weights, tokenizer and processor built in code."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (PreTrainedTokenizerFast, Qwen2AudioConfig, Qwen2AudioForConditionalGeneration,
                          Qwen2AudioProcessor, WhisperFeatureExtractor)

from acousticbench.errors import UserError
from acousticbench.serve.adapters import Chat, Generation, Turn, decoding_of, finish_reason
from acousticbench.serve.lora import cache_root, merged_model_dir

SEED = 0
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|audio_bos|>", "<|AUDIO|>", "<|audio_eos|>", "<unk>"]
# words it can say: A and B first, so some answers parse; the rest makes the prompt text tokenizable
WORDS = ("A B the answer is first second clip Audio 1 2 3 . : , ? I think sound sounds more less louder brighter "
         "longer higher faster reverberant left right yes no You are a helpful assistant system user").split()
CHUNK_S = 10  # the real model pads every clip to 30 s; 10 s keeps a CPU question near 40 ms (longer clips are cut)
SYSTEM = "You are a helpful assistant."
DEVICE_VARIABLE = "ACOUSTICBENCH_DEVICE"  # cpu (default), or cuda: scripts/gpu_check.sh runs it on the GPU


def device() -> str:
    """Where the model runs; asking for CUDA where torch sees none is an error, never a silent CPU run."""
    name = os.environ.get(DEVICE_VARIABLE, "cpu").strip() or "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"{DEVICE_VARIABLE}={name} but torch {torch.__version__} sees no CUDA GPU.")
    return name


def build_tokenizer() -> PreTrainedTokenizerFast:
    vocab: dict[str, int] = {}
    for token in SPECIAL + WORDS:
        vocab.setdefault(token, len(vocab))
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", pad_token="<|endoftext|>",
                                   eos_token="<|im_end|>", additional_special_tokens=SPECIAL[:6])


def build_processor(tokenizer: PreTrainedTokenizerFast) -> Qwen2AudioProcessor:
    features = WhisperFeatureExtractor(feature_size=128, chunk_length=CHUNK_S)  # 128 mel bins, as Qwen2-Audio
    return Qwen2AudioProcessor(feature_extractor=features, tokenizer=tokenizer)


def build_config(tokenizer: PreTrainedTokenizerFast) -> Qwen2AudioConfig:
    # initializer_range 0.5 (not 0.02): large random weights make the output depend on the audio
    return Qwen2AudioConfig(
        audio_config=dict(num_mel_bins=128, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=64,
                          d_model=32, max_source_positions=CHUNK_S * 50, initializer_range=0.5),
        text_config=dict(model_type="qwen2", vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=32768, initializer_range=0.5, tie_word_embeddings=False),
        audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"), initializer_range=0.5)


# output rows made larger, so that some answers are a letter the rules judge reads and a CPU run exercises
# scoring, not only the unparsed path; which letter still depends on the audio and the random weights
HEAD_SCALE = {"A": 3.0, "B": 3.0, "<|im_end|>": 5.0}


def build_model(seed: int = SEED) -> Qwen2AudioForConditionalGeneration:
    """The same weights on every machine from the same seed."""
    tokenizer = build_tokenizer()
    torch.manual_seed(seed)
    model = Qwen2AudioForConditionalGeneration(build_config(tokenizer)).eval()
    head = model.get_output_embeddings().weight
    with torch.no_grad():
        for token, factor in HEAD_SCALE.items():
            head[tokenizer.convert_tokens_to_ids(token)] *= factor
    return model


def saved_base_dir() -> Path:
    """The in-code model saved once, so LoRA merging starts from a folder as it does for real models."""
    config = build_config(build_tokenizer()).to_json_string()
    folder = cache_root() / "tiny-qwen2-audio" / hashlib.sha256(f"{SEED}{config}".encode()).hexdigest()[:12]
    if not (folder / "config.json").is_file():
        build_model().save_pretrained(folder)
    return folder


def _load(folder: Path) -> Qwen2AudioForConditionalGeneration:
    return Qwen2AudioForConditionalGeneration.from_pretrained(folder).eval()


def prompt_text(chat: Chat) -> str:
    """Qwen2-Audio's chat format: each clip as 'Audio N: <|audio_bos|><|AUDIO|><|audio_eos|>'."""
    turns = list(chat.turns)
    if not turns or turns[0].role != "system":
        turns.insert(0, Turn("system", [SYSTEM]))
    text, n = "", 0
    for turn in turns:
        text += f"<|im_start|>{turn.role}\n"
        for part in turn.parts:
            if isinstance(part, str):
                text += part
            else:
                n += 1
                text += f"Audio {n}: <|audio_bos|><|AUDIO|><|audio_eos|>\n"
        text += "<|im_end|>\n"
    return text + "<|im_start|>assistant\n"


def generate_arguments(max_tokens: int) -> dict:
    """transformers' generate() arguments by their own names: greedy is do_sample=False with one beam."""
    return {"do_sample": False, "num_beams": 1, "max_new_tokens": max_tokens, "min_new_tokens": 1}


class TinyQwen2Audio:
    """Greedy, deterministic, and fast on a CPU; its answers mean nothing."""

    decoding = decoding_of(generate_arguments(1), "max_new_tokens", "min_new_tokens")

    def __init__(self, lora: Path | None = None):
        self.tokenizer = build_tokenizer()
        self.processor = build_processor(self.tokenizer)
        self.model_id = "acousticbench/tiny-qwen2-audio"
        if lora is None:
            self.model = build_model()
        else:
            self.model = _load(merged_model_dir(saved_base_dir(), lora, _load, need_gb=0.1))
            self.model_id += f"+lora-{lora.name}"
        self.device = device()
        self.model.to(self.device)
        ids = self.tokenizer.convert_tokens_to_ids
        self.eos = ids("<|im_end|>")
        # never a special token or <unk> (an empty answer is an error to the harness); <|im_end|> may end it
        self.suppress = [ids(t) for t in SPECIAL if t != "<|im_end|>"]

    def generate(self, chat: Chat) -> Generation:
        clips = chat.clips
        inputs = self.processor(text=prompt_text(chat), audio=clips or None, sampling_rate=16_000,
                                return_tensors="pt").to(self.device)
        if chat.seed is not None:
            torch.manual_seed(chat.seed)  # accepted as the API does; greedy decoding does not draw from it
        with torch.inference_mode():
            out = self.model.generate(**inputs, **generate_arguments(chat.max_tokens), eos_token_id=self.eos,
                                      pad_token_id=self.tokenizer.pad_token_id, suppress_tokens=self.suppress)
        prompt_len = inputs["input_ids"].shape[1]
        new = out[0, prompt_len:].tolist()
        stopped = bool(new) and new[-1] == self.eos
        return Generation(text=self.tokenizer.decode(new, skip_special_tokens=True), prompt_tokens=prompt_len,
                          completion_tokens=len(new), finish_reason=finish_reason(len(new), chat.max_tokens, stopped))
