"""The Tiny-Qwen2-Audio checkpoint built in code: the same bytes every time, in the released checkpoints' layout,
loaded whole by transformers; its shipped sampling defaults are not what either server decodes with."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from acousticbench.serve import tiny_checkpoint


def digests(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_two_builds_are_byte_identical_and_in_the_released_layout(tmp_path):
    first, second = tiny_checkpoint.build(tmp_path / "a"), tiny_checkpoint.build(tmp_path / "b")
    assert digests(first) == digests(second)
    assert set(digests(first)) >= {"config.json", "model.safetensors", "tokenizer.json", "preprocessor_config.json",
                                   "chat_template.jinja", "generation_config.json"}
    from safetensors.numpy import load_file

    names = set(load_file(first / "model.safetensors"))
    assert {n.split(".")[0] for n in names} == {"audio_tower", "multi_modal_projector", "language_model"}
    assert "language_model.lm_head.weight" in names and "language_model.model.embed_tokens.weight" in names
    config = json.loads((first / "config.json").read_text())
    assert config["audio_config"]["max_source_positions"] == 1500  # the 30 s window vLLM fixes
    assert config["text_config"]["hidden_size"] // config["text_config"]["num_attention_heads"] >= 32
    assert json.loads((first / "preprocessor_config.json").read_text())["chunk_length"] == 30


def test_a_new_seed_is_new_weights(tmp_path):
    from safetensors.numpy import load_file

    a = load_file(tiny_checkpoint.build(tmp_path / "a", seed=0) / "model.safetensors")
    b = load_file(tiny_checkpoint.build(tmp_path / "b", seed=1) / "model.safetensors")
    assert not np.array_equal(a["language_model.lm_head.weight"], b["language_model.lm_head.weight"])


@pytest.mark.slow  # transformers loads the model
def test_transformers_loads_every_weight_and_the_shipped_defaults_would_change_answers(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")

    folder = tiny_checkpoint.build(tmp_path / "ckpt")
    model, info = transformers.Qwen2AudioForConditionalGeneration.from_pretrained(folder, output_loading_info=True)
    assert (info["missing_keys"], info["unexpected_keys"], info["mismatched_keys"]) == (set(), set(), set())
    processor = transformers.AutoProcessor.from_pretrained(folder)
    messages = [{"role": "user", "content": [{"type": "audio"}, {"type": "audio"},
                                             {"type": "text", "text": "Which clip is louder? Answer A or B."}]}]
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert text.count("<|audio_bos|><|AUDIO|><|audio_eos|>") == 2 and "Audio 2: " in text
    greedy = transformers.GenerationConfig(eos_token_id=tiny_checkpoint.VOCAB["<|im_end|>"], pad_token_id=0)
    answers = {"greedy": [], "shipped": []}
    for i in range(4):
        rng = np.random.default_rng(i)
        clips = [rng.normal(0, 0.1 * (k + 1 + i % 3), 16_000 * (1 + i % 2)).astype(np.float32) for k in range(2)]
        inputs = processor(text=text, audio=clips, sampling_rate=16_000, return_tensors="pt")
        with torch.inference_mode():
            for name, config in (("greedy", greedy), ("shipped", None)):
                kwargs = {"generation_config": config} if config else {"do_sample": False}  # + its penalty
                out = model.generate(**inputs, max_new_tokens=24, **kwargs)[0, inputs["input_ids"].shape[1]:]
                answers[name].append(processor.tokenizer.decode(out, skip_special_tokens=True))
    assert all(a.strip() for a in answers["greedy"])  # never empty, with no suppress_tokens or min_new_tokens
    assert sum(a.split()[-1] in ("A", "B") for a in answers["greedy"]) >= 3  # it stops after a letter
    assert answers["greedy"] != answers["shipped"]  # repetition_penalty 1.1 from generation_config.json
