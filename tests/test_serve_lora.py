"""LoRA finetunes: a tiny random PEFT adapter merged into Tiny-Qwen2-Audio once, by the code the Kimi finetunes use."""
from __future__ import annotations

import importlib.util
import logging

import numpy as np
import pytest

from acousticbench.core.errors import UserError
from acousticbench.serve import lora
from acousticbench.serve.adapters import Chat, Turn, load_adapter
from acousticbench.serve.tiny_checkpoint import checkpoint_dir

pytestmark = [
    pytest.mark.slow,  # the tiny Qwen2-Audio built in transformers, as our server's tests
    pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("torch", "peft")),
                       reason="LoRA needs torch and peft (the [hf-server] extra)"),
    # PEFT asks transformers about gradient checkpointing through a name transformers 5 deprecates; not ours to fix
    pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"),
]


@pytest.fixture(scope="module", autouse=True)
def _heavy() -> None:
    """torch, peft and the tiny model's module, imported when a test here runs rather than when the suite is
    collected (in every xdist worker, most of which run none of these)."""
    global torch, peft, tiny
    import peft
    import torch

    from acousticbench.serve.adapters import tiny_qwen2_audio as tiny


@pytest.fixture
def adapter_dir(tmp_path, monkeypatch):
    """archive/lora/tiny/: a rank-4 adapter with random (not zero) B, so merging changes the weights."""
    monkeypatch.setenv("ACOUSTICBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ACOUSTICBENCH_CACHE_DIR", str(tmp_path / "harness-cache"))  # the checkpoint too: the test adds to it
    torch.manual_seed(1)
    config = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    model = peft.get_peft_model(tiny._load(checkpoint_dir()), config)
    folder = tmp_path / "archive" / "lora" / "tiny"
    model.save_pretrained(folder)
    return folder


def ask(adapter) -> str:
    rng = np.random.default_rng(5)
    clips = [(0.2 * rng.standard_normal(8000)).astype(np.float32) for _ in range(2)]
    return adapter.generate(Chat([Turn("user", [*clips, "Which is louder? A or B."])], max_tokens=8)).text


def test_the_adapter_is_merged_on_the_first_start_and_the_cache_reused_after(adapter_dir, caplog):
    caplog.set_level(logging.INFO, logger="acousticbench.serve")
    tower = checkpoint_dir() / "whisper-large-v3"  # as in Kimi's snapshot: files beside the weights LoRA targets
    tower.mkdir()
    (tower / "model.safetensors").write_bytes(b"audio tower")
    first = load_adapter("tiny_qwen2_audio", adapter_dir)
    merges = [r.getMessage() for r in caplog.records if r.getMessage().startswith("merging LoRA adapter")]
    assert len(merges) == 1 and "once" in merges[0] and "GB of disk" in merges[0]
    (merged,) = (lora.cache_root() / "merged").iterdir()
    done = merged / lora.DONE
    stamp = done.stat().st_mtime_ns
    assert (merged / "whisper-large-v3" / "model.safetensors").read_bytes() == b"audio tower"  # linked, not copied
    assert (merged / "whisper-large-v3" / "model.safetensors").is_symlink()
    assert first.model_id == "acousticbench/tiny-qwen2-audio+lora-tiny"

    caplog.clear()
    second = load_adapter("tiny_qwen2_audio", adapter_dir)
    messages = [r.getMessage() for r in caplog.records]
    assert not any(m.startswith("merging") for m in messages)
    assert any(m.startswith(f"reusing the merged model in {merged}") for m in messages)
    assert done.stat().st_mtime_ns == stamp and list((lora.cache_root() / "merged").iterdir()) == [merged]
    assert ask(first) == ask(second)

    base = tiny._load(checkpoint_dir()).state_dict()
    weights = second.model.state_dict()
    changed = [k for k in base if "q_proj" in k and not torch.equal(base[k], weights[k])]
    assert changed, "the LoRA update was not merged into the weights"
    assert not any("lora_" in k for k in weights)  # merge_and_unload left a plain model


def test_a_changed_adapter_is_merged_again(adapter_dir):
    load_adapter("tiny_qwen2_audio", adapter_dir)
    weights = adapter_dir / "adapter_model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-4] + b"\x00\x00\x00\x00")  # the same names, other bytes
    merged = {p.name for p in (lora.cache_root() / "merged").iterdir()}
    assert lora.cache_key(checkpoint_dir(), adapter_dir) not in merged


def test_an_interrupted_merge_is_not_taken_for_a_finished_one(adapter_dir):
    key = lora.cache_key(checkpoint_dir(), adapter_dir)
    half = lora.cache_root() / "merged" / key
    half.mkdir(parents=True)
    (half / "config.json").write_text("{}")  # no DONE marker: a merge that was killed
    load_adapter("tiny_qwen2_audio", adapter_dir)
    assert (half / lora.DONE).is_file()


def test_a_folder_without_an_adapter_is_a_clear_error(tmp_path):
    with pytest.raises(UserError, match="no adapter_config.json there"):
        load_adapter("tiny_qwen2_audio", tmp_path)


def test_too_little_disk_is_said_before_merging(adapter_dir, monkeypatch):
    monkeypatch.setattr(lora.shutil, "disk_usage", lambda p: type("Usage", (), {"free": 5e9})())
    with pytest.raises(UserError, match="needs about 60 GB free .* only 5 GB"):
        lora.merged_model_dir(checkpoint_dir(), adapter_dir, tiny._load, need_gb=60)
