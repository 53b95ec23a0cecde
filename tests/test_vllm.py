"""Real vLLM in the loop (scripts/test_vllm.sh): the tiny checkpoint served by vLLM 0.32 on the CPU and asked over
real HTTP by the harness; greedy as vLLM means it, logprobs, the model table's limits, parity with our server."""
from __future__ import annotations

import base64
import io
import json
import math

import httpx
import numpy as np
import pytest
import soundfile as sf

from acousticbench.core.errors import UserError
from acousticbench.models.health import health_status
from acousticbench.models.limits import check_prompts
from acousticbench.models.open_weight import BY_SERVE_NAME
from acousticbench.core.records import Prompt
from acousticbench.serve.tiny_checkpoint import MODEL_ID, checkpoint_dir
from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs
from servers.fixtures import records

pytestmark = pytest.mark.vllm
MODEL = "Tiny-Qwen2-Audio-vLLM"
LIMITS = BY_SERVE_NAME["tiny_qwen2_audio_vllm"].limits


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    return write_tiny_pack(tmp_path_factory.mktemp("vllm") / "archive", "rad", 17)  # 20 questions with 3 diagnostics


def run(server, pack, tmp_path, *args, model=MODEL):
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = run_cli("--model", model, "--task", "rad", "--max-samples", "20", "--seed", "42", "--archive", str(pack),
                  "--results-dir", str(tmp_path), *args, cwd=tmp_path, timeout=600,
                  env=harness_env(ACOUSTICBENCH_TINY_QWEN2_AUDIO_VLLM_ENDPOINT=server.roots[0]))
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path)
    return records(run_dir), json.loads((run_dir / "config.json").read_text())


def wav_b64(samples: np.ndarray) -> str:
    buf = io.BytesIO()
    sf.write(buf, samples, 16_000, format="WAV", subtype="PCM_16")
    return base64.b64encode(buf.getvalue()).decode()


def ask(server, clips: list[np.ndarray], kind: str = "input_audio") -> httpx.Response:
    def part(x):
        data = wav_b64(x)
        if kind == "input_audio":
            return {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}
        return {"type": "audio_url", "audio_url": {"url": f"data:audio/wav;base64,{data}"}}

    content = [part(c) for c in clips] + [{"type": "text", "text": "Which clip is louder? Answer A or B."}]
    body = {"model": MODEL_ID, "messages": [{"role": "user", "content": content}], "temperature": 0, "max_tokens": 8}
    return httpx.post(f"{server.roots[0]}/v1/chat/completions", json=body, timeout=300)


def noise(seconds: float, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).normal(0, 0.1, int(16_000 * seconds))).astype(np.float32)


def test_the_server_applies_none_of_the_checkpoints_sampling_defaults(vllm_server):
    shipped = json.loads((checkpoint_dir() / "generation_config.json").read_text())
    assert shipped["repetition_penalty"] == 1.1 and shipped["top_k"] == 20  # what --generation-config auto applies
    assert vllm_server.server_defaults == {}  # read from vLLM's own start-up log: it took none of them
    assert vllm_server.provenance()["sampling_applied"]["repetition_penalty"] == 1.0


def test_twenty_questions_answer_the_same_twice_and_config_names_vllm(vllm_server, pack, tmp_path):
    first, config = run(vllm_server, pack, tmp_path / "one", "--judge", "rules", "--concurrency", "1")
    again, _ = run(vllm_server, pack, tmp_path / "two", "--judge", "rules", "--concurrency", "8")  # batched
    assert len(first) == 20 and not [r for r in first if r["status"] == "error"]
    assert [r["response"] for r in first] == [r["response"] for r in again]
    assert any(r["chosen"] for r in first) and any(r["status"] == "unparsed" for r in first)
    backend = config["backend"]
    assert backend["server"] == "vllm" and backend["server_version"] == "0.32.0"
    assert backend["served_model_id"] == MODEL_ID and backend["sampling_sent"]["repetition_penalty"] == 1.0


def test_judge_logprobs_labels_from_the_first_token(vllm_server, pack, tmp_path):
    got, config = run(vllm_server, pack, tmp_path, "--judge", "logprobs")
    assert config["backend"]["logprobs"] is True
    assert len(got) == 20 and {r["judge"]["method"] for r in got} == {"logprobs"}
    for r in got:
        a, b = r["logprobs"]["A"], r["logprobs"]["B"]
        assert a is not None or b is not None or r["chosen"] is None
        if a is not None and b is not None:
            assert r["chosen"] == ("A" if a > b else "B") and math.exp(a) + math.exp(b) <= 1.0 + 1e-6
        first_word = r["response"].split()[0]
        if first_word in ("A", "B"):  # greedy said that letter first: it was the likeliest token of all
            assert r["chosen"] == first_word
    assert any(r["logprobs"]["A"] is not None and r["logprobs"]["B"] is not None for r in got)


def test_vllm_says_what_our_transformers_server_says_token_for_token(vllm_server, pack, tmp_path):
    vllm, _ = run(vllm_server, pack, tmp_path / "vllm", "--judge", "rules")
    ours, config = run(vllm_server, pack, tmp_path / "ours", "--judge", "rules", model="Tiny-Qwen2-Audio")
    assert config["backend"]["served_model_id"] == MODEL_ID  # the same checkpoint, on the other server
    # vLLM's incremental detokenizer puts the word-level tokenizer's separator before the first token too
    assert [r["response"].strip() for r in vllm] == [r["response"].strip() for r in ours]


def test_a_five_shot_audioicl_episode_with_many_clips_runs(vllm_server, tmp_path):
    from audioicl_pack import reduced_pack

    out = run_cli("--model", MODEL, "--task", "AudioRemap", "--shots", "5", "--max-samples", "2", "--archive",
                  str(reduced_pack()), cwd=tmp_path, timeout=600,
                  env=harness_env(ACOUSTICBENCH_TINY_QWEN2_AUDIO_VLLM_ENDPOINT=vllm_server.roots[0]))
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    got = records(run_dir)
    assert len(got) == 2 and all(r["status"] != "error" and len(r["audio"]) == 18 for r in got), got  # 3k + 3


def test_input_audio_and_audio_url_are_the_same_request(vllm_server):
    clips = [noise(1.0, 1), noise(1.5, 2)]
    one, other = ask(vllm_server, clips, "input_audio"), ask(vllm_server, clips, "audio_url")
    assert one.status_code == other.status_code == 200
    assert one.json()["choices"][0]["message"] == other.json()["choices"][0]["message"]


def test_the_clip_count_limit_is_the_servers_and_the_pre_run_check_agrees(vllm_server, tmp_path):
    assert ask(vllm_server, [noise(0.3, i) for i in range(LIMITS.audio_items)]).status_code == 200
    over = ask(vllm_server, [noise(0.3, i) for i in range(LIMITS.audio_items + 1)])
    assert over.status_code == 400 and "audio" in over.text  # refused by vLLM's --limit-mm-per-prompt
    assert health_status(vllm_server.roots[0]) == 200  # refused, not crashed
    paths = []
    for i in range(LIMITS.audio_items + 1):
        sf.write(tmp_path / f"c{i}.wav", noise(0.3, i), 16_000)
        paths.append(str(tmp_path / f"c{i}.wav"))
    check_prompts(MODEL, LIMITS, [Prompt(benchmark="AcousticBench", question_id="q48", task="t", text="?", audio=paths[:-1], seed=0)])
    with pytest.raises(UserError, match=rf"takes at most {LIMITS.audio_items} audio clips per request.*q49"):
        check_prompts(MODEL, LIMITS, [Prompt(benchmark="AcousticBench", question_id="q49", task="t", text="?", audio=paths, seed=0)])


def test_a_clip_over_30_s_is_cut_by_the_server_and_refused_by_the_pre_run_check(vllm_server, tmp_path):
    long = noise(40.0, 7)
    cut, whole = ask(vllm_server, [long[: 16_000 * 30]]), ask(vllm_server, [long])
    assert cut.status_code == whole.status_code == 200
    # the same prompt: vLLM heard the first 30 s of the 40 s clip and nothing after
    assert whole.json()["usage"]["prompt_tokens"] == cut.json()["usage"]["prompt_tokens"]
    assert whole.json()["choices"][0]["message"]["content"] == cut.json()["choices"][0]["message"]["content"]
    sf.write(tmp_path / "long.wav", long, 16_000)
    sf.write(tmp_path / "cut.wav", long[: 16_000 * 30], 16_000)
    check_prompts(MODEL, LIMITS, [Prompt(benchmark="AcousticBench", question_id="q30", task="t", text="?", audio=[str(tmp_path / "cut.wav")],
                                         seed=0)])
    with pytest.raises(UserError, match=r"hears at most 30 s of audio per input .*q40 would send 40.0 s"):
        check_prompts(MODEL, LIMITS, [Prompt(benchmark="AcousticBench", question_id="q40", task="t", text="?",
                                             audio=[str(tmp_path / "long.wav")], seed=0)])


def test_a_silence_control_runs_and_the_manifest_names_vllm_and_its_chat_template(vllm_server, pack, tmp_path):
    out = run_cli("--model", MODEL, "--task", "rad", "--max-samples", "6", "--control", "silence", "--judge", "rules",
                  "--archive",
                  str(pack), "--results-dir", str(tmp_path), cwd=tmp_path, timeout=600,
                  env=harness_env(ACOUSTICBENCH_TINY_QWEN2_AUDIO_VLLM_ENDPOINT=vllm_server.roots[0]))
    assert out.returncode == 0, out.stderr
    runs = {json.loads((d / "config.json").read_text())["spec"].get("control"): d for d in run_dirs(tmp_path)}
    assert set(runs) == {None, "silence"}
    for folder in runs.values():
        manifest = json.loads((folder / "config.json").read_text())["manifest"]
        assert manifest["server"] == "vllm" and manifest["server_version"] == "0.32.0"
        assert len(manifest["chat_template_render_sha256"]) == 64
    real, silent = (records(runs[k]) for k in (None, "silence"))
    assert all(r["sent"] and s["sent"][0]["sha256"] != r["sent"][0]["sha256"] for r, s in zip(real, silent))


def test_the_prompt_tokens_vllm_reports_grow_by_the_audio_tokens_the_registry_expects(vllm_server, pack, tmp_path):
    """vLLM reports only the prompt's total: the same text with clips of other lengths differs by exactly the audio
    tokens models/audio_tokens.py expects of Qwen2-Audio's processor (25 a second), and a run's records keep both."""
    from acousticbench.models.audio_tokens import QWEN2_AUDIO

    counted = {s: ask(vllm_server, [noise(s, 3)]).json()["usage"]["prompt_tokens"] for s in (1.0, 2.5, 7.29)}
    for seconds in (2.5, 7.29):
        assert counted[seconds] - counted[1.0] == QWEN2_AUDIO.of_clip(seconds) - QWEN2_AUDIO.of_clip(1.0)
    got, _ = run(vllm_server, pack, tmp_path, "--judge", "rules")
    for record in got:
        tokens = record["audio_tokens"]
        assert tokens["counted"] == "prompt" and tokens["expected"] == 2 * QWEN2_AUDIO.of_clip(0.1)
        assert tokens["reported"] > tokens["expected"] and record["status"] != "error"

