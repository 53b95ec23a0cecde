"""The engine over real HTTP: retries only what can succeed, honours Retry-After, bounds concurrency, and the
outcome of a run depends on neither concurrency nor completion order."""
from __future__ import annotations

import time
from collections import Counter

import pytest

from conftest import write_tiny_pack
from servers import gemini_server, openai_server
from servers.fixtures import evaluate_model, expected, fast_retries, question_keys, records  # noqa: F401
from servers.local import ALL_FAULTS, FaultPlan

BACKENDS = {
    "served": ("Voxtral-Mini-3B", openai_server, "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"),
    "gemini": ("Gemini-3-Flash", gemini_server, "GOOGLE_GEMINI_BASE_URL"),
}


def use(monkeypatch, backend: str, server) -> str:
    model, _module, variable = BACKENDS[backend]
    monkeypatch.setenv(variable, server.url)
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-test-key")
    return model


# the Gemini case is slow (the SDK's own client per request); the served case keeps the engine in the inner loop
@pytest.mark.parametrize("backend", ["served", pytest.param("gemini", marks=pytest.mark.slow)])
def test_fault_injection_every_question_once_and_no_failure_scored(backend, fast_retries, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 80)
    keys = question_keys(archive)
    ids = sorted(keys)
    # ~20% of attempts fail by hash; besides, one question per kind of fault, and one that never recovers
    by_key = {keys[qid]: [fault] for qid, fault in zip(ids, ALL_FAULTS)}
    by_key[keys[ids[len(ALL_FAULTS)]]] = ["503", "reset", "500", "slow", "malformed"]  # the 503 uses up no attempt
    plan = FaultPlan(rate=0.2, by_key=by_key)
    # a slow answer takes twice the timeout, and a cold SDK client's first round on a loaded machine still fits it
    fast_retries.setenv("ACOUSTICBENCH_REQUEST_TIMEOUT", "2.5")
    with BACKENDS[backend][1].serve(plan, slow_s=5.0) as server:
        model = use(fast_retries, backend, server)
        result = evaluate_model(model, archive, tmp_path / "results", concurrency=8, max_error_rate=1.0)
    got = records(result.run_dir)
    assert [r["id"] for r in got] == sorted(keys)  # every question exactly once, sorted
    assert {item.fault for item in server.received} >= set(ALL_FAULTS)
    want = {qid: expected(plan, key, 4) for qid, key in keys.items()}
    assert {r["id"]: (r["status"], r["attempts"], r["chosen"]) for r in got} == want
    sent = Counter(item.key for item in server.received)
    assert all(sent[keys[r["id"]]] == r["attempts"] for r in got)  # each attempt was one real request
    for r in got:
        if r["status"] != "answered":
            assert r["chosen"] is None and r["judge"]["method"] == "none"
        if r["status"] == "error":
            assert r["error"] and r["response"] is None
    assert Counter(r["status"] for r in got) == Counter(s for s, _, _ in want.values())
    assert result.metrics.statuses == dict(sorted(Counter(s for s, _, _ in want.values()).items()))


def test_retry_after_is_honoured(fast_retries, tiny_pack, tmp_path):
    keys = question_keys(tiny_pack)
    plan = FaultPlan(by_key={keys["rad_0001"]: ["429"]})
    with openai_server.serve(plan, retry_after="1") as server:
        model = use(fast_retries, "served", server)
        result = evaluate_model(model, tiny_pack, tmp_path / "results", max_samples=1)
    assert records(result.run_dir)[0]["attempts"] == 2
    first, again = server.state.arrivals[keys["rad_0001"]]
    assert again - first >= 0.95  # base delay is zero: only Retry-After: 1 explains the wait


def test_retry_after_beyond_the_limit_is_not_waited_for(fast_retries, tiny_pack, tmp_path):
    keys = question_keys(tiny_pack)
    fast_retries.setenv("ACOUSTICBENCH_MAX_RETRY_AFTER", "0.5")
    with openai_server.serve(FaultPlan(by_key={keys["rad_0001"]: ["429"]}), retry_after="30") as server:
        model = use(fast_retries, "served", server)
        started = time.monotonic()
        result = evaluate_model(model, tiny_pack, tmp_path / "results", max_samples=1)
    assert time.monotonic() - started < 10
    (record,) = records(result.run_dir)
    assert record["status"] == "error" and record["attempts"] == 1
    assert "HTTP 429" in record["error"] and "wait 30 s" in record["error"]


def test_non_retryable_errors_are_recorded_once_and_the_run_goes_on(fast_retries, tiny_pack, tmp_path):
    keys = question_keys(tiny_pack)
    with openai_server.serve(FaultPlan(by_key={keys["rad_0002"]: ["400", "400"]})) as server:
        model = use(fast_retries, "served", server)
        result = evaluate_model(model, tiny_pack, tmp_path / "results")
    got = {r["id"]: r for r in records(result.run_dir)}
    assert got["rad_0002"]["status"] == "error" and got["rad_0002"]["attempts"] == 1
    assert "HTTP 400" in got["rad_0002"]["error"] and "Invalid audio" in got["rad_0002"]["error"]
    assert sum(item.key == keys["rad_0002"] for item in server.received) == 1
    assert Counter(r["status"] for r in got.values()) == {"answered": 10, "error": 1}


def test_concurrency_is_bounded_and_never_changes_the_outcome(fast_retries, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 40)
    outcomes = []
    for concurrency in (1, 3, 16):
        with openai_server.serve(FaultPlan(rate=0.25, kinds=("500", "429", "400", "refusal")), delay_s=0.01) as server:
            model = use(fast_retries, "served", server)
            result = evaluate_model(model, archive, tmp_path / f"results{concurrency}", concurrency=concurrency,
                                    max_error_rate=1.0)
        assert server.state.max_inflight <= concurrency
        if concurrency == 3:
            assert server.state.max_inflight == 3
        outcomes.append([(r["id"], r["status"], r["chosen"], r["attempts"], r["error"] and r["error"].split(":")[1])
                         for r in records(result.run_dir)])
    assert outcomes[0] == outcomes[1] == outcomes[2]


def test_request_timeout_is_retried_then_recorded(fast_retries, tiny_pack, tmp_path):
    # as above: a 0.2 s limit also timed out the other question's first answer on a loaded machine
    fast_retries.setenv("ACOUSTICBENCH_REQUEST_TIMEOUT", "2.5")
    fast_retries.setenv("ACOUSTICBENCH_MAX_ATTEMPTS", "2")
    keys = question_keys(tiny_pack)
    with openai_server.serve(FaultPlan(by_key={keys["rad_0001"]: ["slow", "slow"]}), slow_s=5.0) as server:
        model = use(fast_retries, "served", server)
        result = evaluate_model(model, tiny_pack, tmp_path / "results", max_samples=2)
    first, second = records(result.run_dir)
    assert (first["status"], first["attempts"]) == ("error", 2)
    assert "no answer within 2.5 s" in first["error"]
    assert (second["status"], second["attempts"]) == ("answered", 1)
