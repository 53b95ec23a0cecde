"""The Tiny-Qwen2-Audio checkpoint, built in code into a folder that both our transformers server and real vLLM load:
byte-identical from the same seed (numpy draws every weight; config files are written by hand, not by a library)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

SEED = 0
MODEL_ID = "acousticbench/tiny-qwen2-audio"  # what both servers report in /v1/models and every response
BUILD_VERSION = 2  # bump when anything below changes what is written: the cache folder is named by it
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|audio_bos|>", "<|AUDIO|>", "<|audio_eos|>", "<unk>"]
# words it can say: A and B first, so some answers parse; the rest makes the prompt text tokenizable
WORDS = ("A B the answer is first second clip Audio 1 2 3 . : , ? I think sound sounds more less louder brighter "
         "longer higher faster reverberant left right yes no You are a helpful assistant system user").split()
VOCAB = {token: i for i, token in enumerate(dict.fromkeys(SPECIAL + WORDS))}
SYSTEM = "You are a helpful assistant."  # Qwen2-Audio's default system prompt
CHUNK_S = 30  # vLLM fixes Qwen2-Audio's input features at 3000 frames (30 s): a shorter window kills its engine
HIDDEN, HEADS, LAYERS = 64, 2, 2  # head size 32: vLLM's CPU attention takes 32, 64, 80, ... (16 kills the engine)
INIT_STD = 0.5  # large random weights (not 0.02): the output depends on the audio
# Two residual dimensions the layers never write (their output rows are zero), so the embedding decides them:
STOP_DIM = 0  # +: the token just said is A or B; <|im_end|> reads it, so an answer ends after a letter
BIAS_DIM = 1  # always +: the other special tokens read it negatively, so they are never said (no suppress_tokens,
# which vLLM does not take from a checkpoint, is needed; neither is min_new_tokens)
MARK, STOP_GAIN = 4.0, 400.0
LETTER_GAIN = 1.5  # A and B a little likelier than other words, so that some answers parse and some do not
# sampling defaults of the kind released checkpoints ship (Qwen2-Audio-7B-Instruct's sample with repetition_penalty):
# a server that applied them would not be greedy, which the vllm tests check it does not
GENERATION_DEFAULTS = {"do_sample": True, "repetition_penalty": 1.1, "temperature": 0.7, "top_k": 20, "top_p": 0.5}

# Qwen2-Audio's chat format, written here (not the vendor's template text): a default system turn, each clip as
# 'Audio N: <|audio_bos|><|AUDIO|><|audio_eos|>' on its own line; vLLM hands audio parts over as {"type": "audio"}
CHAT_TEMPLATE = (
    "{% set n = namespace(audio=0) %}{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n" + SYSTEM + "<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] in ('audio', 'audio_url', 'input_audio') %}{% set n.audio = n.audio + 1 %}"
    "Audio {{ n.audio }}: <|audio_bos|><|AUDIO|><|audio_eos|>\n"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def config() -> dict:
    """config.json: Qwen2-Audio's with tiny sizes; the rest are the architecture's defaults."""
    audio = {"model_type": "qwen2_audio_encoder", "num_mel_bins": 128, "encoder_layers": LAYERS,
             "encoder_attention_heads": HEADS, "encoder_ffn_dim": 2 * HIDDEN, "d_model": HIDDEN,
             "max_source_positions": CHUNK_S * 50}
    text = {"model_type": "qwen2", "vocab_size": len(VOCAB), "hidden_size": HIDDEN, "intermediate_size": 2 * HIDDEN,
            "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "num_key_value_heads": 1,
            "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
            "tie_word_embeddings": False, "torch_dtype": "float32"}
    return {"architectures": ["Qwen2AudioForConditionalGeneration"], "model_type": "qwen2_audio",
            "audio_config": audio, "text_config": text, "audio_token_index": VOCAB["<|AUDIO|>"],
            "torch_dtype": "float32"}


def tensor_shapes() -> dict[str, tuple[int, ...]]:
    """Every weight by its name in the released checkpoints' layout (language_model.model.*, audio_tower.*, ...)."""
    h, ffn, kv = HIDDEN, 2 * HIDDEN, HIDDEN // HEADS
    shapes: dict[str, tuple[int, ...]] = {
        "audio_tower.conv1.weight": (h, 128, 3), "audio_tower.conv1.bias": (h,),
        "audio_tower.conv2.weight": (h, h, 3), "audio_tower.conv2.bias": (h,),
        "audio_tower.embed_positions.weight": (CHUNK_S * 50, h),
        "audio_tower.layer_norm.weight": (h,), "audio_tower.layer_norm.bias": (h,),
        "multi_modal_projector.linear.weight": (h, h), "multi_modal_projector.linear.bias": (h,),
        "language_model.model.embed_tokens.weight": (len(VOCAB), h), "language_model.model.norm.weight": (h,),
        "language_model.lm_head.weight": (len(VOCAB), h),
    }
    for i in range(LAYERS):
        a = f"audio_tower.layers.{i}."
        for proj in ("q_proj", "v_proj", "out_proj"):
            shapes |= {f"{a}self_attn.{proj}.weight": (h, h), f"{a}self_attn.{proj}.bias": (h,)}
        shapes |= {f"{a}self_attn.k_proj.weight": (h, h), f"{a}fc1.weight": (ffn, h), f"{a}fc1.bias": (ffn,),
                   f"{a}fc2.weight": (h, ffn), f"{a}fc2.bias": (h,)}
        for norm in ("self_attn_layer_norm", "final_layer_norm"):
            shapes |= {f"{a}{norm}.weight": (h,), f"{a}{norm}.bias": (h,)}
        t = f"language_model.model.layers.{i}."
        shapes |= {f"{t}self_attn.q_proj.weight": (h, h), f"{t}self_attn.q_proj.bias": (h,),
                   f"{t}self_attn.k_proj.weight": (kv, h), f"{t}self_attn.k_proj.bias": (kv,),
                   f"{t}self_attn.v_proj.weight": (kv, h), f"{t}self_attn.v_proj.bias": (kv,),
                   f"{t}self_attn.o_proj.weight": (h, h), f"{t}mlp.gate_proj.weight": (ffn, h),
                   f"{t}mlp.up_proj.weight": (ffn, h), f"{t}mlp.down_proj.weight": (h, ffn),
                   f"{t}input_layernorm.weight": (h,), f"{t}post_attention_layernorm.weight": (h,)}
    return shapes


def _sinusoids(length: int, channels: int) -> np.ndarray:
    """Whisper's fixed position table."""
    scales = np.exp(-np.log(10000) / (channels // 2 - 1) * np.arange(channels // 2))
    angles = np.arange(length)[:, None] * scales[None, :]
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


def weights(seed: int = SEED) -> dict[str, np.ndarray]:
    """Random weights drawn by name in sorted order: norms one, biases zero, positions Whisper's sinusoids."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in sorted(tensor_shapes().items()):
        if "norm" in name:
            value = np.ones(shape) if name.endswith("weight") else np.zeros(shape)
        elif name.endswith("bias"):
            value = np.zeros(shape)
        elif "embed_positions" in name:
            value = _sinusoids(*shape)
        else:
            value = rng.normal(0.0, INIT_STD, shape)
        out[name] = value.astype(np.float32)
    _steer(out)
    return out


def _steer(w: dict[str, np.ndarray]) -> None:
    """The stop and bias dimensions (see STOP_DIM): kept out of every layer's output, read by the output head."""
    for name, value in w.items():
        if name.endswith(("o_proj.weight", "down_proj.weight")) and name.startswith("language_model"):
            value[[STOP_DIM, BIAS_DIM], :] = 0.0
    embed, head = w["language_model.model.embed_tokens.weight"], w["language_model.lm_head.weight"]
    embed[:, STOP_DIM] = -MARK
    embed[[VOCAB["A"], VOCAB["B"]], STOP_DIM] = MARK
    embed[:, BIAS_DIM] = MARK
    head[:, [STOP_DIM, BIAS_DIM]] = 0.0
    head[[VOCAB["A"], VOCAB["B"]]] *= LETTER_GAIN
    for token in SPECIAL:
        head[VOCAB[token]] = 0.0
        if token == "<|im_end|>":
            head[VOCAB[token], STOP_DIM] = STOP_GAIN
        else:
            head[VOCAB[token], BIAS_DIM] = -STOP_GAIN


def tokenizer_json() -> str:
    """A word-level tokenizer over VOCAB; the special tokens are matched whole before splitting on whitespace."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers

    core = Tokenizer(models.WordLevel(vocab=VOCAB, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    return core.to_str(pretty=True)


def _files(seed: int) -> dict[str, bytes]:
    from safetensors.numpy import save

    def js(data: dict) -> bytes:
        return (json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n").encode()

    eos, pad = VOCAB["<|im_end|>"], VOCAB["<|endoftext|>"]
    return {
        "config.json": js(config()),
        "generation_config.json": js({**GENERATION_DEFAULTS, "eos_token_id": eos, "pad_token_id": pad}),
        "model.safetensors": save(weights(seed), metadata={"format": "pt"}),
        "tokenizer.json": tokenizer_json().encode(),
        "tokenizer_config.json": js({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>",
                                     "pad_token": "<|endoftext|>", "unk_token": "<unk>", "model_max_length": 32768,
                                     "additional_special_tokens": SPECIAL[:6], "processor_class": "Qwen2AudioProcessor"}),
        "special_tokens_map.json": js({"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "unk_token": "<unk>",
                                       "additional_special_tokens": SPECIAL[:6]}),
        "preprocessor_config.json": js({"feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 128,
                                        "sampling_rate": 16000, "hop_length": 160, "chunk_length": CHUNK_S,
                                        "n_fft": 400, "n_samples": CHUNK_S * 16000, "nb_max_frames": CHUNK_S * 100,
                                        "padding_side": "right", "padding_value": 0.0, "return_attention_mask": True,
                                        "processor_class": "Qwen2AudioProcessor"}),
        "chat_template.jinja": CHAT_TEMPLATE.encode(),
    }


def build(folder: Path, seed: int = SEED) -> Path:
    """Write the checkpoint into `folder` (which must not exist yet)."""
    folder.mkdir(parents=True)
    for name, data in _files(seed).items():
        (folder / name).write_bytes(data)
    return folder


def checkpoint_path(seed: int = SEED) -> Path:
    """Where the checkpoint of `seed` lives in the cache, built or not (a dry run only names it)."""
    from acousticbench.core.environment import cache_dir

    key = hashlib.sha256(f"{BUILD_VERSION}:{seed}:{json.dumps(config(), sort_keys=True, allow_nan=False)}".encode()).hexdigest()[:12]
    return cache_dir() / "tiny-qwen2-audio" / key


def checkpoint_dir(seed: int = SEED) -> Path:
    """The checkpoint in the cache, built once (atomically: servers and tests may build it at the same moment)."""
    folder = checkpoint_path(seed)
    if not (folder / "model.safetensors").is_file():
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".building-", dir=folder.parent))
        build(staging / "ckpt", seed)
        try:
            os.rename(staging / "ckpt", folder)
        except OSError:  # another process finished first: its copy is the same bytes
            pass
        shutil.rmtree(staging, ignore_errors=True)
    return folder


if __name__ == "__main__":
    print(checkpoint_dir())
