"""Gemini through the real google-genai SDK against a local generateContent server: request shape, safety blocks
as refusals, retired models, key precedence."""
from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

from acousticbench.benchmarks.acoustic.pack import load_questions
from acousticbench.core.errors import BackendError, UserError
from acousticbench.benchmarks.acoustic.benchmark import make_prompt
from acousticbench.run.catalog import get_model
from acousticbench.benchmarks.acoustic.spec import acoustic_spec
from servers import gemini_server
from servers.fixtures import evaluate_model, fast_retries, question_keys, records  # noqa: F401
from servers.local import FaultPlan


def use(monkeypatch, server, key: str = "gemini-test-key") -> None:
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    monkeypatch.setenv("GEMINI_API_KEY", key)


def test_request_shape_and_provenance(fast_retries, tiny_pack, tmp_path):
    with gemini_server.serve() as server:
        use(fast_retries, server)
        result = evaluate_model("Gemini-3.1-Pro", tiny_pack, tmp_path / "results", max_samples=2, seed=9)
    questions = {q.sha256[q.audio[0]]: q for q in load_questions(tiny_pack, "rad")}
    assert [r["status"] for r in records(result.run_dir)] == ["answered", "answered"]
    for item in server.received:
        assert item.path.endswith("/models/gemini-3.1-pro-preview:generateContent")
        assert item.headers["x-goog-api-key"] == "gemini-test-key"
        question = questions[item.key]
        parts = item.body["contents"][0]["parts"]
        audio = gemini_server.inline_parts(item.body)
        assert [mime for mime, _ in audio] == ["audio/wav", "audio/wav"]
        assert [hashlib.sha256(data).hexdigest() for _, data in audio] == [question.sha256[a] for a in question.audio]
        assert parts[-1] == {"text": question.prompt}
        config = item.body["generationConfig"]
        assert config["seed"] == 9 and "temperature" not in config  # Google advises the default on Gemini 3
    backend = json.loads((result.run_dir / "config.json").read_text())["backend"]
    assert backend["endpoint"] == server.url and backend["api_model"] == "gemini-3.1-pro-preview"
    assert backend["served_model_id"] == "models/gemini-3.1-pro-preview local-1"
    assert "gemini-test-key" not in json.dumps(backend)


def test_safety_blocks_are_refusals_never_scored(fast_retries, tiny_pack, tmp_path):
    keys = question_keys(tiny_pack)
    plan = FaultPlan(by_key={keys["rad_0001"]: ["filter"], keys["rad_0002"]: ["refusal"], keys["rad_0003"]: ["empty"]})
    with gemini_server.serve(plan) as server:
        use(fast_retries, server)
        result = evaluate_model("Gemini-3-Flash", tiny_pack, tmp_path / "results", max_samples=4)
    got = records(result.run_dir)
    assert [(r["status"], r["chosen"], r["attempts"]) for r in got] == [
        ("refused", None, 1), ("refused", None, 1), ("error", None, 1), ("answered", got[3]["chosen"], 1)]
    assert "no candidates" in got[2]["error"]
    assert result.metrics.scored.refusal_rate == 0.5 and result.metrics.scored.answered == 1


def test_retired_model_names_a_current_one(fast_retries, tiny_pack, tmp_path):
    with gemini_server.serve(missing_models=["gemini-3.1-pro-preview"]) as server:
        use(fast_retries, server)
        with pytest.raises(UserError, match="--api-model gemini-3-flash-preview"):
            evaluate_model("Gemini-3.1-Pro", tiny_pack, tmp_path / "results")
    assert not any(item.path.endswith(":generateContent") for item in server.received)


def test_google_api_key_wins_over_gemini_api_key(fast_retries, tiny_pack, tmp_path):
    with gemini_server.serve() as server:
        use(fast_retries, server, key="the-gemini-key")
        fast_retries.setenv("GOOGLE_API_KEY", "the-google-key")
        evaluate_model("Gemini-3-Flash", tiny_pack, tmp_path / "results", max_samples=1)
    assert server.received[0].headers["x-goog-api-key"] == "the-google-key"


@pytest.mark.parametrize("fault,retryable,retry_after", [
    ("429", True, 3.0), ("500", True, None), ("503", True, None), ("reset", True, None), ("malformed", True, None),
    ("400", False, None),
])
def test_error_classification(fault, retryable, retry_after, fast_retries, tiny_pack):
    async def scenario():
        with gemini_server.serve(FaultPlan(always=fault), retry_after="3") as server:
            use(fast_retries, server)
            backend = get_model("Gemini-3-Flash").create()
            await backend.open()
            prompt = make_prompt(acoustic_spec(model="Gemini-3-Flash", task="rad", archive=tiny_pack),
                                 load_questions(tiny_pack, "rad")[0])
            try:
                with pytest.raises(BackendError) as caught:
                    await backend.answer(prompt)
            finally:
                await backend.close()
            assert len(server.received) == 1  # the SDK did not retry: only the engine does
            return caught.value

    error = asyncio.run(scenario())
    assert error.retryable is retryable and error.retry_after == retry_after, error


def test_interleaved_parts_keep_their_order(tiny_pack):
    from acousticbench.models.gemini import Gemini
    from acousticbench.core.records import PromptPart

    question = load_questions(tiny_pack, "rad")[0]
    prompt = make_prompt(acoustic_spec(model="Gemini-3-Flash", task="rad", archive=tiny_pack), question)
    parts = [PromptPart(kind="text", text="[A] "), PromptPart(kind="audio", audio=prompt.audio[1]),
             PromptPart(kind="text", text=" Which?")]
    contents, notes = Gemini._contents(prompt.model_copy(update={"parts": parts}))
    assert contents[0] == "[A] " and contents[2] == " Which?" and notes == []
    assert hashlib.sha256(contents[1].inline_data.data).hexdigest() == question.sha256[question.audio[1]]
