"""What the Kimi-Audio and MiniCPM-o adapters hand their models (no weights here): clips, merging, order."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from acousticbench.core.errors import UserError
from acousticbench.serve.adapters import Chat, Turn, load_adapter

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the adapters need torch")


@pytest.fixture(scope="module", autouse=True)
def _heavy() -> None:
    """The adapters (they import torch), imported when a test here runs rather than when the suite is collected."""
    global KimiAudioInstruct, MiniCPMo
    from acousticbench.serve.adapters.kimi_audio import KimiAudioInstruct
    from acousticbench.serve.adapters.minicpm_o import MiniCPMo

SR = 16_000


def clips() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [(0.1 * rng.standard_normal(n)).astype(np.float32) for n in (SR // 2, SR // 4)]


def test_minicpm_gets_one_audio_input_two_clips_merged_with_a_second_of_silence():
    first, second = clips()
    chat = Chat([Turn("system", ["Be brief."]), Turn("user", [first, second, "Which is louder? A or B."])], 16)
    msgs = MiniCPMo.messages(chat)
    assert [m["role"] for m in msgs] == ["system", "user"] and msgs[0]["content"] == ["Be brief."]
    audio, text = msgs[1]["content"]
    assert text == "Which is louder? A or B."
    assert len(audio) == len(first) + SR + len(second)
    assert np.array_equal(audio[:len(first)], first) and not audio[len(first):len(first) + SR].any()
    assert np.array_equal(audio[len(first) + SR:], second)


def test_minicpm_takes_no_lora():
    with pytest.raises(UserError, match="Kimi-Audio only"):
        MiniCPMo(lora=Path("."))


def test_kimi_gets_each_clip_as_a_wav_file_in_order(tmp_path):
    kimi = object.__new__(KimiAudioInstruct)  # no weights here: only the message building is checked
    kimi.tmp = tmp_path
    first, second = clips()
    messages = kimi._messages(Chat([Turn("user", ["Listen.", first, second, "A or B?"])], 16))
    assert [(m["role"], m["message_type"]) for m in messages] == [
        ("user", "text"), ("user", "audio"), ("user", "audio"), ("user", "text")]
    for message, clip in zip(messages[1:3], (first, second), strict=True):
        samples, rate = sf.read(message["content"], dtype="float32")
        assert rate == SR and len(samples) == len(clip) and np.abs(samples - clip).max() < 1e-4


def test_unknown_server_models_list_the_known_ones():
    with pytest.raises(UserError, match="Known: tiny_qwen2_audio, kimi_audio_7b_instruct, minicpm_o_4_5"):
        load_adapter("qwen9")


def test_every_adapter_passes_greedy_decoding_by_its_vendors_names():
    from acousticbench.serve.adapters import kimi_audio, minicpm_o, tiny_qwen2_audio

    minicpm = minicpm_o.chat_arguments(32)  # chat() defaults to do_sample=True and 3 beams: both must be set
    assert minicpm["do_sample"] is False and minicpm["num_beams"] == 1 and "sampling" not in minicpm
    assert minicpm["max_new_tokens"] == 32 and minicpm["generate_audio"] is False
    kimi = kimi_audio.generate_arguments(32)  # kimia_infer's sampler takes the argmax at temperature <= 1e-6
    assert kimi["text_temperature"] == 0.0 and kimi["audio_temperature"] == 0.0 and kimi["max_new_tokens"] == 32
    assert kimi["text_repetition_penalty"] == 1.0 and kimi["output_type"] == "text"
    tiny = tiny_qwen2_audio.generate_arguments(32)
    assert tiny["do_sample"] is False and tiny["num_beams"] == 1
    greedy = {"do_sample": False, "num_beams": 1}
    kimi_greedy = {"text_temperature": 0.0, "audio_temperature": 0.0, "text_repetition_penalty": 1.0,
                   "audio_repetition_penalty": 1.0}
    for adapter, arguments, reported in ((MiniCPMo, minicpm, greedy), (KimiAudioInstruct, kimi, kimi_greedy),
                                         (tiny_qwen2_audio.TinyQwen2Audio, tiny, greedy)):
        assert adapter.decoding == reported  # what /v1/models reports, and config.json records
        assert adapter.decoding.items() <= arguments.items()  # is what is passed


class KimiLikeModel:
    """Stands in for kimia_infer's KimiAudio (no weights here), with its contract: generate() calls _generate_loop with
    max_new_tokens, which returns the text tokens before the end token (all of them when it never came)."""

    def __init__(self, answer_tokens: int):
        self.answer_tokens = answer_tokens

    def _generate_loop(self, max_new_tokens: int, **_):
        return [], list(range(min(self.answer_tokens, max_new_tokens)))

    def generate(self, chats, output_type="text", max_new_tokens=-1, **_):
        _, text_tokens = self._generate_loop(max_new_tokens=max_new_tokens)
        return None, " ".join("w" for _ in text_tokens)


@pytest.mark.parametrize("answer_tokens, reason", [(3, "stop"), (16, "length"), (40, "length")])
def test_kimi_finish_reason_is_length_when_generation_hit_the_limit(tmp_path, answer_tokens, reason):
    kimi = object.__new__(KimiAudioInstruct)
    kimi.tmp = tmp_path
    kimi.attach(KimiLikeModel(answer_tokens))
    generation = kimi.generate(Chat([Turn("user", ["A or B?", clips()[0]])], max_tokens=16))
    assert generation.finish_reason == reason
    assert generation.completion_tokens == min(answer_tokens, 16)
