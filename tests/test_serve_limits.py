"""The model table's limits, over real HTTP against our transformers server with Tiny-Qwen2-Audio: a many-clip AudioICL
prompt to a model that takes 5 clips is refused before the run starts (Voxtral, as documented) or merged into one
clip with 1 s of silence and noted on the record (a merge-policy model)."""
from __future__ import annotations

import asyncio
import base64
import importlib.util
import io
import json
import subprocess
import time

import pytest
import soundfile as sf

from acousticbench.benchmarks.audioicl.episodes import load_episodes
from acousticbench.benchmarks.audioicl.prompts import build_prompt, load_alphabet
from acousticbench.models.health import health_status
from acousticbench.models.limits import Limits
from acousticbench.models.local_server import free_port
from acousticbench.models.open_weight import BY_SERVE_NAME
from acousticbench.models.openai_compat import ServedModel
from audioicl_pack import reduced_pack
from conftest import REPO
from harness_cli import harness_env, run_cli, run_dirs, start_python

# checked without importing them: torch alone takes seconds in every xdist worker at collection
pytestmark = pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("torch", "fastapi")),
                                reason="our server needs torch and the [hf-server] extra")


@pytest.fixture(scope="module")
def tiny_server():
    port = free_port()
    process = start_python("-m", "acousticbench.serve.hf_server", "--model", "tiny_qwen2_audio", "--host", "127.0.0.1",
                           "--port", str(port), cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while health_status(url) != 200:
        assert process.poll() is None and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.2)
    yield url
    process.terminate()
    process.wait(timeout=20)


def morse_prompt(shots: int = 5):
    """A MorseCode episode with the 26-clip alphabet bank before its demos: the most clips AudioICL sends."""
    archive = reduced_pack()
    meta, base = archive / "audioicl" / "meta", archive / "audioicl"
    episode = load_episodes(meta, shots, ["MorseCode"])[0]
    alphabet = load_alphabet(base / "data" / "MorseCode" / "alphabet")
    return build_prompt(episode, base, style="specific", seed=42, alphabet=alphabet)


@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_a_model_that_takes_5_clips_is_refused_before_the_run_starts(tiny_server, tmp_path):
    archive = reduced_pack()
    assert BY_SERVE_NAME["voxtral_mini_3b"].limits == Limits(5, 2400.0, "refuse", BY_SERVE_NAME[
        "voxtral_mini_3b"].limits.why)
    out = run_cli("--model", "Voxtral-Mini-3B", "--endpoint", tiny_server, "--task", "MorseCode", "--shots", "5",
                  "--morse-alphabet", str(archive / "audioicl" / "data" / "MorseCode" / "alphabet"),
                  "--max-samples", "2", "--archive", str(archive), cwd=tmp_path, env=harness_env())
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert "Voxtral-Mini-3B takes at most 5 audio clips per request (vLLM issue #22109" in out.stderr
    assert "(MorseCode) carries 32: run fewer shots" in out.stderr  # 26 alphabet clips, 5 demos, the query
    assert run_dirs(tmp_path / "results") == []  # nothing started, nothing written


@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_a_merge_model_gets_one_clip_and_the_record_says_so(tiny_server):
    prompt = morse_prompt()
    assert len(prompt.audio) > 5 and prompt.parts  # the alphabet bank, the demos and the query
    model = ServedModel("Five-Clips", serve_name="five_clips", endpoint=tiny_server, max_tokens=8,
                        limits=Limits(audio_items=5, over="merge"))
    sent = []

    async def session():
        await model.open()
        try:
            model.check_prompts([prompt])  # merging is allowed: nothing to refuse
            original = model._exchange

            async def recording(i, method, path, body=None):
                if body is not None:
                    sent.append(json.loads(body))
                return await original(i, method, path, body)

            model._exchange = recording  # observe the wire only; the request still goes to the real server
            return await model.answer(prompt)
        finally:
            await model.close()

    reply = asyncio.run(session())
    (request,) = sent
    audio = [p for p in request["messages"][0]["content"] if p["type"] == "input_audio"]
    assert len(audio) == 1
    merged, sr = sf.read(io.BytesIO(base64.b64decode(audio[0]["input_audio"]["data"])))
    lengths = [sf.info(p).frames for p in prompt.audio]
    assert len(merged) == sum(lengths) + sr * (len(lengths) - 1)  # 1 s of silence between clips
    assert reply.text and reply.notes == [f"{len(prompt.audio)} clips merged into one with 1 s of silence between "
                                          "them (the model takes at most 5 audio inputs)"]
    assert model.provenance()["server_decoding"] == {"do_sample": False, "num_beams": 1}
    assert model.provenance()["limits"]["over"] == "merge"


def test_a_clip_longer_than_the_model_hears_is_refused(tmp_path):
    from acousticbench.core.errors import UserError
    from acousticbench.models.limits import check_prompts
    from acousticbench.core.records import Prompt

    path = tmp_path / "long.wav"
    sf.write(path, [0.0] * (16_000 * 32), 16_000)
    prompt = Prompt(benchmark="AcousticBench", question_id="q1", task="rad", text="A or B?", audio=[str(path)], seed=42)
    with pytest.raises(UserError, match=r"Tiny-Qwen2-Audio hears at most 30 s of audio per input .*q1 would send 32.0 s"):
        check_prompts("Tiny-Qwen2-Audio", BY_SERVE_NAME["tiny_qwen2_audio"].limits, [prompt])
