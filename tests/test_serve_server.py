"""Our transformers server over real HTTP on 127.0.0.1 with Tiny-Qwen2-Audio: the OpenAI wire format and bad audio."""
from __future__ import annotations

import base64
import io
import math
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest
import soundfile as sf

from acousticbench.models.local_server import free_port
from acousticbench.models.health import health_status
from conftest import REPO
from harness_cli import needs, python, start_python

pytestmark = needs("torch", "fastapi")


def wav_b64(seconds: float = 0.5, sr: int = 16_000, seed: int = 0, channels: int = 1) -> str:
    rng = np.random.default_rng(seed)
    samples = (0.1 * rng.standard_normal((int(seconds * sr), channels))).astype(np.float32)
    buf = io.BytesIO()
    sf.write(buf, samples, sr, format="WAV", subtype="PCM_16")
    return base64.b64encode(buf.getvalue()).decode()


def audio_part(data: str, fmt: str = "wav") -> dict:
    return {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}


def chat(*parts: dict, max_tokens: int = 12, seed: int = 42) -> dict:
    content = [*parts, {"type": "text", "text": "Which clip sounds more reverberant? Answer A or B."}]
    return {"model": "acousticbench/tiny-qwen2-audio", "messages": [{"role": "user", "content": content}],
            "max_tokens": max_tokens, "temperature": 0.0, "seed": seed}


def start_server(port: int, log) -> subprocess.Popen:
    return start_python("-m", "acousticbench.serve.hf_server", "--model", "tiny-qwen2-audio", "--host", "127.0.0.1",
                        "--port", str(port), cwd=REPO, stdout=subprocess.DEVNULL, stderr=log, text=True)


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    """One server for the module, started as run.py starts it: (client, its log file); stopped at the end."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    with log_path.open("w") as log:
        process = start_server(port, log)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while health_status(url) != 200:
        assert process.poll() is None, log_path.read_text()
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.2)
    with httpx.Client(base_url=url, timeout=60) as client:
        yield client, log_path
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture(scope="module")
def server(running):
    return running[0]


@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_health_and_models(server):
    assert server.get("/health").json() == {"status": "ok"}
    models = server.get("/v1/models").json()
    assert models["object"] == "list" and [m["id"] for m in models["data"]] == ["acousticbench/tiny-qwen2-audio"]
    # how it is served, for config.json's manifest: the chat template's hash and the processor's rate
    assert len(models["data"][0]["chat_template_sha256"]) == 64 and models["data"][0]["sampling_rate"] == 16000


@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_two_clips_give_an_openai_completion_and_the_same_answer_twice(server):
    body = chat(audio_part(wav_b64(seed=1)), audio_part(wav_b64(seed=2)))
    first, again = server.post("/v1/chat/completions", json=body), server.post("/v1/chat/completions", json=body)
    assert first.status_code == 200, first.text
    reply = first.json()
    assert reply["object"] == "chat.completion" and reply["model"] == "acousticbench/tiny-qwen2-audio"
    choice = reply["choices"][0]
    assert choice["message"]["role"] == "assistant" and choice["message"]["content"].strip()
    assert choice["finish_reason"] in ("stop", "length")
    usage = reply["usage"]
    assert 1 <= usage["completion_tokens"] <= 12  # max_tokens honoured
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] and usage["prompt_tokens"] > 20
    assert again.json()["choices"][0]["message"] == choice["message"]  # greedy: the same answer
    other = server.post("/v1/chat/completions", json=chat(audio_part(wav_b64(seed=3)), audio_part(wav_b64(seed=4))))
    assert other.status_code == 200


@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_logprobs_come_back_in_openai_s_shape_and_agree_with_the_answer(server):
    body = {**chat(audio_part(wav_b64(seed=1)), audio_part(wav_b64(seed=2))), "logprobs": True, "top_logprobs": 5}
    choice = server.post("/v1/chat/completions", json=body).json()["choices"][0]
    content = choice["logprobs"]["content"]
    said = [c["token"] for c in content if c["token"] != "<|im_end|>"]  # the end token is generated, not said
    assert said == choice["message"]["content"].split()
    first = content[0]
    assert len(first["top_logprobs"]) == 5 and first["top_logprobs"][0]["token"] == first["token"]  # greedy: the top
    assert sum(math.exp(t["logprob"]) for t in first["top_logprobs"]) <= 1.0 + 1e-6
    assert server.post("/v1/chat/completions", json=chat(audio_part(wav_b64()))).json()["choices"][0]["logprobs"] is None
    wrong = server.post("/v1/chat/completions", json={**chat(audio_part(wav_b64())), "top_logprobs": 3})
    assert wrong.status_code == 400 and wrong.json()["error"]["message"] == "top_logprobs needs logprobs: true"


@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_stereo_and_other_rates_are_accepted(server):
    body = chat(audio_part(wav_b64(sr=44_100, channels=2)), audio_part(wav_b64(sr=8_000)))
    assert server.post("/v1/chat/completions", json=body).status_code == 200


@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_requests_in_parallel_are_queued_and_all_answered(server):
    bodies = [chat(audio_part(wav_b64(seed=s)), audio_part(wav_b64(seed=s + 1)), max_tokens=4) for s in range(6)]
    with ThreadPoolExecutor(6) as pool:
        replies = list(pool.map(lambda b: server.post("/v1/chat/completions", json=b), bodies))
    assert [r.status_code for r in replies] == [200] * 6


def _too_long() -> str:
    return wav_b64(seconds=601, sr=1_000)  # 10 min 1 s at a low rate: a small body, a long clip


def _not_wav() -> str:
    return base64.b64encode(b"ID3\x03\x00 this is not a wave file at all" * 4).decode()


def _header_only() -> str:
    return wav_b64(seconds=0.0)


def _cut(seconds_kept: float) -> str:
    """A 0.5 s WAV cut short in its samples (a partial upload): its header still announces all of them."""
    whole = base64.b64decode(wav_b64())
    return base64.b64encode(whole[: 44 + int(seconds_kept * 16_000) * 2]).decode()


def _nan() -> str:
    buf = io.BytesIO()
    sf.write(buf, np.full(8000, np.nan, dtype=np.float32), 16_000, format="WAV", subtype="FLOAT")
    return base64.b64encode(buf.getvalue()).decode()


BAD_AUDIO = {
    "not base64": (lambda: audio_part("%%% not base64 %%%"), "not valid base64"),
    "not a WAV": (lambda: audio_part(_not_wav()), "not a WAV file"),
    "no bytes": (lambda: audio_part(""), "empty"),
    "no samples": (lambda: audio_part(_header_only()), "empty"),
    "truncated WAV": (lambda: audio_part(base64.b64encode(base64.b64decode(wav_b64())[:30]).decode()),
                      "could not be decoded (Error in WAV file"),
    "cut in its samples": (lambda: audio_part(_cut(0.25)), "the WAV file is truncated: its header announces 16000 "
                                                            "bytes of samples, the request holds 8000"),
    "cut after its header": (lambda: audio_part(_cut(0.0)), "the WAV file is truncated"),
    "too short": (lambda: audio_part(wav_b64(seconds=0.03)), "the clip lasts 0.030 s; this server takes clips of at "
                                                             "least 0.1 s"),
    "data: URL": (lambda: audio_part("data:audio/wav;base64," + wav_b64()), "without a 'data:...;base64,' prefix"),
    "NaN samples": (lambda: audio_part(_nan()), "NaN or infinite samples"),
    "bad mp3": (lambda: audio_part(_not_wav(), fmt="mp3"), "could not be decoded"),
    "too long": (lambda: audio_part(_too_long()), "at most 600 s"),
    "unknown format": (lambda: audio_part(wav_b64(), fmt="flac"), "not supported"),
    "no data field": (lambda: {"type": "input_audio", "input_audio": {"format": "wav"}}, "input_audio needs"),
}


@pytest.mark.parametrize("case", list(BAD_AUDIO))
@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_bad_audio_is_a_400_with_a_reason_and_the_server_keeps_serving(server, case):
    make, reason = BAD_AUDIO[case]
    reply = server.post("/v1/chat/completions", json=chat(audio_part(wav_b64()), make()))
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert reason in error["message"] and error["type"] == "invalid_request_error"
    assert error["param"] == "messages[0].content[1]"
    assert server.post("/v1/chat/completions", json=chat(audio_part(wav_b64()))).status_code == 200


@pytest.mark.parametrize("body, reason", [
    (b"{not json", "not JSON"),
    (b'{"messages": []}', "messages must be a non-empty list"),
    (b'{"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}', "unsupported part"),
    (b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}', "max_tokens"),
    (b'{"messages": [{"role": "user", "content": "hi"}], "seed": "x"}', "seed"),
    (b'{"messages": [{"role": "user", "content": "hi"}], "seed": 18446744073709551616}', "seed must fit in 64 bits"),
    (b'{"messages": [{"role": "user", "content": "hi"}], "seed": -9223372036854775809}', "seed must fit in 64 bits"),
    (b'{"messages": [{"role": "user", "content": "\xff\xfe"}]}', "not UTF-8"),
])
@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_malformed_requests_are_400s(server, body, reason):
    reply = server.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert reply.status_code == 400 and reason in reply.json()["error"]["message"]


def test_importing_the_server_imports_no_model_code():
    heavy = ("torch", "transformers", "kimia_infer", "acousticbench.serve.adapters.kimi_audio",
             "acousticbench.serve.adapters.minicpm_o")
    code = (f"import sys, acousticbench.serve.hf_server, acousticbench.serve.adapters; "
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))")
    out = python("-c", code, cwd=REPO, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_the_log_says_loading_first_and_serving_only_once_it_serves(running):
    client, log_path = running
    deadline = time.monotonic() + 5  # the line follows the first moment it listens
    while "serving" not in log_path.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = [line.split(" ", 2)[2] for line in log_path.read_text().splitlines()]  # without the date and time
    assert lines[0].startswith("loading tiny-qwen2-audio for 127.0.0.1:") and "serving" not in lines[0]
    serving = [line for line in lines if line.startswith("serving ")]
    assert len(serving) == 1 and serving[0].startswith(f"serving acousticbench/tiny-qwen2-audio on {client.base_url}")


@pytest.mark.parametrize("model", [None, "", "acousticbench/tiny-qwen2-audio"])
@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_the_served_model_or_no_model_name_is_answered(server, model):
    body = chat(audio_part(wav_b64()))
    if model is None:
        del body["model"]
    else:
        body["model"] = model
    assert server.post("/v1/chat/completions", json=body).status_code == 200


@pytest.mark.slow  # starts our transformers server with Tiny-Qwen2-Audio
def test_an_unknown_model_is_a_404_naming_the_served_one(server):
    reply = server.post("/v1/chat/completions", json={**chat(audio_part(wav_b64())), "model": "gpt-4o-audio-preview"})
    assert reply.status_code == 404
    assert reply.json() == {"error": {
        "message": "the model 'gpt-4o-audio-preview' is not served here; this server serves "
                   "'acousticbench/tiny-qwen2-audio' (see /v1/models)",
        "type": "invalid_request_error", "param": "model", "code": "model_not_found"}}


def _fails_fast(*args: str) -> subprocess.CompletedProcess:
    """The server's exit, with no "loading" line: it stopped before loading a model."""
    out = python("-m", "acousticbench.serve.hf_server", "--model", "tiny-qwen2-audio", *args, cwd=REPO, timeout=60)
    assert "loading" not in out.stderr and "Traceback" not in out.stderr
    return out


def test_a_port_in_use_is_one_line_and_exit_2_before_loading():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = _fails_fast("--host", "127.0.0.1", "--port", str(port))
    assert out.returncode == 2
    assert out.stderr.splitlines() == [f"error: port {port} on 127.0.0.1 is in use: stop what listens there, or pass "
                                       "another --port."]


@pytest.mark.parametrize("port", ["99999", "0", "-1"])
def test_a_port_out_of_range_is_one_line_and_exit_2(port):
    out = _fails_fast("--port", port)
    assert out.returncode == 2 and out.stderr.splitlines() == [f"error: --port {port} is not a TCP port (1-65535)."]
