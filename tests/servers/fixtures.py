"""Fixtures and helpers for backend tests: zeroed retry waits, a clean environment, runs against local servers."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness_cli import FAST, is_provider_variable
from servers.local import RETRYABLE_FAULTS, FaultPlan, answer_for


@pytest.fixture
def fast_retries(monkeypatch):
    """No backoff waits, no provider keys or URLs from the developer's shell, short connect waits."""
    for name in list(os.environ):
        if is_provider_variable(name):
            monkeypatch.delenv(name)
    for name, value in FAST.items():
        monkeypatch.setenv(name, value)
    return monkeypatch


def question_keys(archive: Path, task: str = "rad") -> dict[str, str]:
    """Question id -> the key the servers see: the sha256 of the question's first clip."""
    from acousticbench.benchmarks.acoustic.pack import load_questions

    return {q.id: q.sha256[q.audio[0]] for q in load_questions(archive, task)}


OVERLOAD_FAULTS = ("429", "503")  # "later": asked again without using up the question's attempts


def expected(plan: FaultPlan, key: str, max_attempts: int, max_overloads: int = 50) -> tuple[str, int, str | None]:
    """(status, attempts, chosen) the harness must record for a question under `plan`; attempts counts every
    request, the 429s and 503s waited out included."""
    failures = overloads = request = 0
    while True:
        request += 1
        fault = plan.fault(key, request)
        if fault is None:
            return "answered", request, answer_for(key)
        if fault in OVERLOAD_FAULTS and overloads < max_overloads:
            overloads += 1
            continue
        failures += fault in RETRYABLE_FAULTS
        if fault in RETRYABLE_FAULTS and failures < max_attempts:
            continue
        return ("refused" if fault in ("filter", "refusal") else "error"), request, None


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "responses.jsonl").read_text().splitlines()]


def evaluate_model(model: str, archive: Path, results: Path, **spec):
    """One in-process run (no progress bar): the RunResult."""
    from acousticbench.run.sweep import run_one
    from acousticbench.benchmarks.acoustic.spec import acoustic_spec

    spec.setdefault("judge", "rules")  # these runs test backends; the judge has tests of its own
    return run_one(acoustic_spec(model=model, task="rad", archive=archive, results_dir=results, **spec), progress=False)
