"""What the Kimi-Audio and MiniCPM-o adapters hand their models (no weights here): clips, merging, order."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("torch")

from acousticbench.errors import UserError  # noqa: E402
from acousticbench.serve.adapters import Chat, Turn, load_adapter  # noqa: E402
from acousticbench.serve.adapters.kimi_audio import KimiAudioInstruct  # noqa: E402
from acousticbench.serve.adapters.minicpm_o import MiniCPMo  # noqa: E402

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
