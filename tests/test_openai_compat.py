"""Open-weight models over the OpenAI-compatible wire (our vLLM stand-in): what is sent, what is recorded, and
how a missing, loading or dead server is reported."""
from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import time
from collections import Counter

import pytest
import soundfile as sf

from acousticbench.benchmarks.acoustic.pack import load_questions
from acousticbench.core.errors import BackendError, UserError
from acousticbench.benchmarks.acoustic.benchmark import make_prompt
from acousticbench.run.catalog import get_model
from acousticbench.benchmarks.acoustic.spec import acoustic_spec
from harness_cli import harness_env, run_cli
from servers import openai_server
from servers.fixtures import evaluate_model, fast_retries, records  # noqa: F401
from servers.local import FaultPlan, answer_for

VARIABLE = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"


def audio_parts(body: dict) -> list[dict]:
    return [p for p in body["messages"][0]["content"] if p["type"] == "input_audio"]


def test_wire_format_and_provenance(fast_retries, tiny_pack, tmp_path):
    with openai_server.serve(model_ids=["mistralai/Voxtral-Mini-3B-2507"]) as server:
        fast_retries.setenv(VARIABLE, server.url + "/v1")  # the export line may carry /v1
        result = evaluate_model("Voxtral-Mini-3B", tiny_pack, tmp_path / "results", max_samples=3, seed=7)
    questions = {q.id: q for q in load_questions(tiny_pack, "rad")}
    assert len(server.received) == 3
    for item in server.received:
        body = item.body
        assert body["model"] == "mistralai/Voxtral-Mini-3B-2507"  # learned from /v1/models
        assert body["temperature"] == 0.0 and body["seed"] == 7 and body["max_tokens"] == 256
        parts = body["messages"][0]["content"]
        assert [p["type"] for p in parts] == ["input_audio", "input_audio", "text"]
        question = next(q for q in questions.values() if q.sha256[q.audio[0]] == item.key)
        assert parts[2]["text"] == question.prompt
        for part, rel in zip(audio_parts(body), question.audio):
            assert part["input_audio"]["format"] == "wav"
            assert not part["input_audio"]["data"].startswith("data:")
            wav = base64.b64decode(part["input_audio"]["data"], validate=True)
            assert hashlib.sha256(wav).hexdigest() == question.sha256[rel]  # the clips, in listening order
        assert item.headers["authorization"] == "Bearer EMPTY"
        assert item.headers["content-type"] == "application/json"  # vLLM's FastAPI parses nothing else
    got = records(result.run_dir)
    assert [r["chosen"] for r in got] == [answer_for(questions[r["id"]].sha256[questions[r["id"]].audio[0]]) for r in got]
    backend = json.loads((result.run_dir / "config.json").read_text())["backend"]
    assert backend["endpoints"] == [server.url] and backend["served_model_id"] == "mistralai/Voxtral-Mini-3B-2507"
    assert backend["temperature"] == 0.0


def test_the_hand_built_request_body_is_the_json_it_stands_for(tiny_pack):
    from acousticbench.models.chat_wire import audio_request_json

    question = load_questions(tiny_pack, "rad")[0]
    prompt = make_prompt(acoustic_spec(model="Voxtral-Mini-3B", task="rad", archive=tiny_pack), question)
    prompt = prompt.model_copy(update={"text": 'Quotes " and \\ and ünïcode\nlines'})
    fields = {"model": "m/x", "seed": 3, "temperature": 0.0}
    body, notes = audio_request_json(fields, prompt)
    clips = [base64.b64encode((tiny_pack / rel).read_bytes()).decode() for rel in question.audio]
    assert json.loads(body) == {**fields, "messages": [{"role": "user", "content": [
        *({"type": "input_audio", "input_audio": {"data": c, "format": "wav"}} for c in clips),
        {"type": "text", "text": prompt.text}]}]} and notes == []


def test_interleaved_parts_keep_their_order(tiny_pack):
    from acousticbench.models.chat_wire import audio_request_json
    from acousticbench.core.records import PromptPart

    question = load_questions(tiny_pack, "rad")[0]
    prompt = make_prompt(acoustic_spec(model="Voxtral-Mini-3B", task="rad", archive=tiny_pack), question)
    clip1, clip2 = prompt.audio
    parts = [PromptPart(kind="text", text="[A] "), PromptPart(kind="audio", audio=clip1),
             PromptPart(kind="text", text=" [B] "), PromptPart(kind="audio", audio=clip2),
             PromptPart(kind="text", text=" Which?")]
    body, _ = audio_request_json({"model": "m"}, prompt.model_copy(update={"parts": parts}))
    content = json.loads(body)["messages"][0]["content"]
    assert [p.get("text") or hashlib.sha256(base64.b64decode(p["input_audio"]["data"])).hexdigest()
            for p in content] == ["[A] ", question.sha256[question.audio[0]], " [B] ",
                                  question.sha256[question.audio[1]], " Which?"]


def test_several_endpoints_share_the_requests(fast_retries, tmp_path):
    from conftest import write_tiny_pack

    archive = write_tiny_pack(tmp_path / "archive", "rad", 30)
    with openai_server.serve(delay_s=0.02) as one, openai_server.serve(delay_s=0.02) as two:
        result = evaluate_model("Voxtral-Mini-3B", archive, tmp_path / "results", concurrency=4,
                                endpoint=f"{one.url}, {two.url}")
    assert len(records(result.run_dir)) == 33
    assert len(one.received) + len(two.received) == 33
    assert min(len(one.received), len(two.received)) >= 12  # spread, not all on the first
    assert json.loads((result.run_dir / "config.json").read_text())["backend"]["endpoints"] == [one.url, two.url]


def test_single_audio_model_gets_merged_clips_and_the_record_says_so(fast_retries, tiny_pack, tmp_path):
    with openai_server.serve() as server:
        fast_retries.setenv("ACOUSTICBENCH_MINICPM_O_4_5_ENDPOINT", server.url)
        result = evaluate_model("MiniCPM-o-4.5", tiny_pack, tmp_path / "results", max_samples=1)
    (part,) = audio_parts(server.received[0].body)
    merged, sr = sf.read(io.BytesIO(base64.b64decode(part["input_audio"]["data"])), dtype="int16")
    (question,) = load_questions(tiny_pack, "rad")[:1]
    clips = [sf.read(str(tiny_pack / rel), dtype="int16")[0] for rel in question.audio]
    assert sr == 16000 and len(merged) == len(clips[0]) + 16000 + len(clips[1])
    assert (merged[:len(clips[0])] == clips[0]).all() and not merged[len(clips[0]):-len(clips[1])].any()
    (record,) = records(result.run_dir)
    assert record["status"] == "answered" and "merged into one with 1 s of silence" in record["notes"][0]
    # the record fingerprints what went on the wire: the one merged clip, not the two it was made of
    wire = base64.b64decode(part["input_audio"]["data"])
    assert [(c["sha256"], c["frames"]) for c in record["sent"]] == [(hashlib.sha256(wire).hexdigest(), len(merged))]


def test_waits_for_a_loading_server(fast_retries, tiny_pack, tmp_path):
    with openai_server.serve(loading_until=time.time() + 0.6) as server:
        fast_retries.setenv(VARIABLE, server.url)
        result = evaluate_model("Voxtral-Mini-3B", tiny_pack, tmp_path / "results", max_samples=1)
    assert records(result.run_dir)[0]["status"] == "answered"


def test_a_far_server_is_asked_for_health_models_and_version_at_once(fast_retries, tiny_pack, tmp_path):
    with openai_server.serve(probe_delay_s=0.3) as server:  # every GET answers 0.3 s late, as from far away
        fast_retries.setenv(VARIABLE, server.url)
        result = evaluate_model("Voxtral-Mini-3B", tiny_pack, tmp_path / "results", max_samples=1)
        gets = list(server.state.gets)
    assert sorted(path for path, _, _ in gets) == ["/health", "/v1/models", "/version"]
    assert max(arrival for _, arrival, _ in gets) < min(answered for _, _, answered in gets)  # all out at once
    assert records(result.run_dir)[0]["status"] == "answered"
    assert json.loads((result.run_dir / "config.json").read_text())["backend"]["served_model_id"] == "local/served-model"


def test_a_loading_server_is_asked_for_its_models_again_once_it_is_up(fast_retries, tiny_pack, tmp_path):
    with openai_server.serve(loading_until=time.time() + 0.6) as server:  # /v1/models answers while /health says 503
        fast_retries.setenv(VARIABLE, server.url)
        result = evaluate_model("Voxtral-Mini-3B", tiny_pack, tmp_path / "results", max_samples=1)
        order = [path for path, _, _ in sorted(server.state.gets, key=lambda get: get[1])]  # by arrival
    last = {path: len(order) - 1 - order[::-1].index(path) for path in ("/health", "/v1/models")}
    assert order.count("/v1/models") == 2 and last["/health"] < last["/v1/models"], order
    assert records(result.run_dir)[0]["status"] == "answered"


def test_connection_refused_mid_run_is_retryable(fast_retries, tiny_pack):
    async def scenario():
        with openai_server.serve() as server:
            backend = get_model("Voxtral-Mini-3B").create(endpoint=server.url)
            await backend.open()
        prompt = make_prompt(acoustic_spec(model="Voxtral-Mini-3B", task="rad", archive=tiny_pack),
                             load_questions(tiny_pack, "rad")[0])
        try:
            with pytest.raises(BackendError) as caught:
                await backend.answer(prompt)
        finally:
            await backend.close()
        return caught.value

    error = asyncio.run(scenario())
    assert error.retryable and "lost the connection" in str(error)


@pytest.mark.parametrize("fault,retryable,refused", [
    ("429", True, None), ("500", True, None), ("503", True, None), ("reset", True, None), ("malformed", True, None),
    ("400", False, None), ("401", False, None), ("empty", False, None), ("filter", None, True), ("refusal", None, True),
])
def test_error_classification(fault, retryable, refused, fast_retries, tiny_pack):
    async def scenario():
        with openai_server.serve(FaultPlan(always=fault), retry_after="7") as server:
            backend = get_model("Voxtral-Mini-3B").create(endpoint=server.url)
            await backend.open()
            prompt = make_prompt(acoustic_spec(model="Voxtral-Mini-3B", task="rad", archive=tiny_pack),
                                 load_questions(tiny_pack, "rad")[0])
            try:
                return await backend.answer(prompt)
            except BackendError as err:
                return err
            finally:
                await backend.close()

    outcome = asyncio.run(scenario())
    if refused:
        assert outcome.refused
    else:
        assert isinstance(outcome, BackendError) and outcome.retryable is retryable, outcome
        assert outcome.retry_after == (7.0 if fault == "429" else None)


def test_missing_endpoint_names_the_variable_and_the_serve_script(tiny_pack, tmp_path):
    out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(tiny_pack), cwd=tmp_path,
                  env=harness_env())
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert VARIABLE in out.stderr and "./scripts/docker_serve.sh voxtral_mini_3b" in out.stderr
    assert not (tmp_path / "results").exists()


def test_a_dead_server_is_reported_after_a_short_wait(tiny_pack, tmp_path):
    with openai_server.serve() as server:
        url = server.url  # a port that was just free again: nothing listens there now
    started = time.monotonic()
    out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(tiny_pack), cwd=tmp_path,
                  env=harness_env(**{VARIABLE: url, "ACOUSTICBENCH_CONNECT_WAIT": "1"}))
    assert time.monotonic() - started < 15
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert f"no server at {url}" in out.stderr and "docker_serve.sh voxtral_mini_3b" in out.stderr


def test_api_model_that_the_server_does_not_serve(fast_retries, tiny_pack, tmp_path):
    with openai_server.serve(model_ids=["Qwen/Qwen2-Audio-7B-Instruct"]) as server:
        fast_retries.setenv(VARIABLE, server.url)
        with pytest.raises(UserError, match="serves Qwen/Qwen2-Audio-7B-Instruct, not 'other'"):
            evaluate_model("Voxtral-Mini-3B", tiny_pack, tmp_path / "results", api_model="other")
        assert Counter(item.path for item in server.received) == Counter()
