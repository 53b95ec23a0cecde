"""The public episode format as a user meets it: every variant loads, bad lines are named, prompts render in order."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from acousticbench.core.audio import write_wav
from acousticbench.benchmarks.audioicl import TASKS
from acousticbench.benchmarks.audioicl.episodes import load_episodes
from acousticbench.benchmarks.audioicl.prompts import GENERAL, SPECIFIC, build_prompt, read_lines
from acousticbench.core.errors import ArchiveError
from audioicl_pack import SAMPLE

SINGLE = {"id": "AudioICL00001", "task": "AudioCount",
          "demos": [{"audio_path": "data/c/1.wav", "label": "1"}, {"audio_path": "data/c/7.wav", "label": 7}],
          "query": {"audio_path": "data/c/2.wav", "label": "2"}}
REMAP = {"id": "AudioICL02101", "task": "AudioRemap",
         "demos": [{"clips": [{"role": "A", "audio_path": "data/r/a.wav", "label": "E"},
                              {"role": "B", "audio_path": "data/r/b.wav", "label": "G"},
                              {"role": "MIX", "audio_path": "data/r/abb.wav", "label": "EGG"}]}],
         "query": {"clips": [{"role": "A", "audio_path": "data/r/a.wav", "label": "E"},
                             {"role": "B", "audio_path": "data/r/b.wav", "label": "G"},
                             {"role": "MIX", "audio_path": "data/r/aba.wav"}], "label": "EGE"}}
ANOMALY = {"id": "AudioICL02401", "task": "AnomalyDetect", "object": "slider",
           "demos": [{"clips": [{"role": "Normal", "audio_path": "data/a/n.wav", "label": "Normal"},
                                {"role": "Anomalous", "audio_path": "data/a/x.wav", "label": "Anomalous"}]}],
           "query": {"clips": [{"role": "Query", "audio_path": "data/a/q.wav"}], "label": "Normal"}}


def write_meta(folder: Path, k: int, *episodes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"meta_k{k}.jsonl"
    path.write_text("".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in episodes))
    return path


@pytest.mark.skipif(not SAMPLE.is_dir(), reason=f"the public metadata sample is not at {SAMPLE}")
@pytest.mark.parametrize("k", [1, 3, 5])
def test_every_line_of_the_public_sample_loads(k):
    lines = (SAMPLE / f"meta_k{k}.jsonl").read_text().splitlines()
    episodes = load_episodes(SAMPLE, k)
    assert len(episodes) == len(lines) == 108
    assert {e.task for e in episodes} == set(TASKS)
    assert all(len(e.demos) == k and e.gt for e in episodes)
    remap = next(e for e in episodes if e.task == "AudioRemap")
    assert [c.role for c in remap.query.clips] == ["A", "B", "MIX"] and remap.query.clips[-1].label is None
    assert next(e for e in episodes if e.task == "AnomalyDetect").object


def test_single_clip_demos_with_numeric_labels(tmp_path):
    write_meta(tmp_path, 2, SINGLE)
    (episode,) = load_episodes(tmp_path, 2)
    assert [d.label for d in episode.demos] == ["1", "7"] and episode.gt == "2"
    assert episode.audio_paths() == ["data/c/1.wav", "data/c/7.wav", "data/c/2.wav"]


def test_a_k_file_keeps_the_first_k_demos(tmp_path):
    write_meta(tmp_path, 1, SINGLE)
    (episode,) = load_episodes(tmp_path, 1)
    assert [d.audio_path for d in episode.demos] == ["data/c/1.wav"]


def test_multi_clip_roles_render_in_order_with_the_query_label_empty(tmp_path):
    write_meta(tmp_path, 1, REMAP)
    (episode,) = load_episodes(tmp_path, 1)
    prompt = build_prompt(episode, tmp_path, style="specific", seed=1)
    assert [(ln.tag, ln.label) for ln in read_lines(prompt)] == [
        ("Demo 1 A", "E"), ("Demo 1 B", "G"), ("Demo 1 MIX", "EGG"), ("Query A", "E"), ("Query B", "G"), ("Query MIX", None)]
    assert prompt.text.endswith("[Query MIX] <audio 6> Label:")
    assert prompt.audio[2].endswith("data/r/abb.wav") and prompt.audio[5].endswith("data/r/aba.wav")


def test_anomaly_episodes_name_the_machine(tmp_path):
    write_meta(tmp_path, 1, ANOMALY)
    (episode,) = load_episodes(tmp_path, 1)
    assert episode.object == "slider"
    text = build_prompt(episode, tmp_path, style="specific", seed=1).text
    assert "slider" in text and "[Demo 1 Normal] <audio 1> Label: Normal" in text and "[Query] <audio 3> Label:" in text
    assert "slider" not in build_prompt(episode, tmp_path, style="none", seed=1).text


def test_instruction_override_and_prompt_styles(tmp_path):
    write_meta(tmp_path, 2, {**SINGLE, "instruction": "Count the knocks."}, {**SINGLE, "id": "AudioICL00002"})
    own, plain = load_episodes(tmp_path, 2)
    assert build_prompt(own, tmp_path, style="specific", seed=1).text.startswith("Count the knocks.\n")
    assert build_prompt(plain, tmp_path, style="specific", seed=1).text.startswith(SPECIFIC["AudioCount"])
    assert build_prompt(plain, tmp_path, style="general", seed=1).text.startswith(GENERAL)
    assert build_prompt(own, tmp_path, style="none", seed=1).text.startswith("[Demo Audio 1] <audio 1> Label: 1")


def test_parts_interleave_text_and_audio_in_the_order_of_the_text(tmp_path):
    write_meta(tmp_path, 2, SINGLE)
    (episode,) = load_episodes(tmp_path, 2)
    prompt = build_prompt(episode, tmp_path, style="specific", seed=1)
    kinds = [p.kind for p in prompt.parts]
    assert kinds == ["text", "audio"] * 3 + ["text"]
    assert [p.audio for p in prompt.parts if p.kind == "audio"] == prompt.audio
    joined = "".join(p.text if p.kind == "text" else f"<audio {prompt.audio.index(p.audio) + 1}>" for p in prompt.parts)
    assert joined.replace("\n\n", "\n") == prompt.text.replace("\n\n", "\n")


def test_icl_pad_pads_every_clip_to_the_longest(tmp_path):
    for name, seconds in (("1", 0.5), ("7", 1.0), ("2", 0.25)):
        (tmp_path / "data" / "c").mkdir(parents=True, exist_ok=True)
        write_wav(tmp_path / "data" / "c" / f"{name}.wav", np.full(int(seconds * 16000), 0.1))
    write_meta(tmp_path, 2, SINGLE)
    (episode,) = load_episodes(tmp_path, 2)
    import soundfile as sf

    prompt = build_prompt(episode, tmp_path, style="specific", seed=1, pad_dir=tmp_path / "pad")
    assert {sf.info(p).frames for p in prompt.audio} == {16000}
    assert build_prompt(episode, tmp_path, style="specific", seed=1).audio[0].endswith("data/c/1.wav")


@pytest.mark.parametrize("line, field", [
    ('{"id": "AudioICL00001", "task": "AudioCount", "demos": [', "not valid JSON"),
    (json.dumps({**SINGLE, "query": {"label": "2"}}), "field query"),
    (json.dumps({**SINGLE, "demos": [{"audio_path": "a.wav", "label": "1"}]}), "field demos"),
    (json.dumps({**SINGLE, "task": "AudioCounting"}), "field task"),
    (json.dumps({**SINGLE, "query": {"audio_path": "q.wav"}}), "field query.label"),
    (json.dumps({k: v for k, v in SINGLE.items() if k != "id"}), "field id"),
])
def test_errors_name_the_file_line_and_field(tmp_path, line, field):
    path = write_meta(tmp_path, 2, {**SINGLE, "id": "AudioICL00000"}, line)
    with pytest.raises(ArchiveError) as err:
        load_episodes(tmp_path, 2)
    assert f"{path}:2:" in str(err.value) and field in str(err.value)


def test_a_duplicate_id_and_a_missing_file_are_named(tmp_path):
    path = write_meta(tmp_path, 2, SINGLE, SINGLE)
    with pytest.raises(ArchiveError, match=rf"{path}:2: field id: episode AudioICL00001 appears twice"):
        load_episodes(tmp_path, 2)
    with pytest.raises(ArchiveError, match="no AudioICL metadata at .*meta_k3.jsonl: build the open pack"):
        load_episodes(tmp_path, 3)
