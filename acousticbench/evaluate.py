"""One run from start to end: pick the questions, ask the model, write the run folder, compute metrics."""
from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from acousticbench import provenance
from acousticbench.archive.pack import load_manifest, load_questions, manifest_sha256
from acousticbench.engine import RetryPolicy, run_questions
from acousticbench.errors import ArchiveError
from acousticbench.judge import RULES_VERSION
from acousticbench.metrics import compute_metrics
from acousticbench.models.registry import get_model
from acousticbench.records import Metrics, Prompt, Question, Record
from acousticbench.results import (
    CONFIG, FINAL_STATUSES, METRICS, RESPONSES, ResponsesWriter, latest_run_dir, new_run_dir, read_records,
    rewrite_sorted, write_json,
)
from acousticbench.spec import RunSpec


@dataclass(frozen=True)
class RunResult:
    spec: RunSpec
    run_dir: Path
    metrics: Metrics
    records: list[Record]
    resumed: int  # records kept from an earlier, interrupted run


def select_questions(spec: RunSpec) -> list[Question]:
    """The split's questions in canonical id order, cut to --max-samples; every audio file must exist."""
    questions = load_questions(spec.archive, spec.task)
    if spec.split != "all":
        questions = [q for q in questions if q.split == spec.split]
    if spec.max_samples is not None:
        questions = questions[: spec.max_samples]
    for q in questions:
        for rel in q.audio:
            if not (spec.archive / rel).is_file():
                raise ArchiveError(f"missing audio file {spec.archive / rel} (question {q.id}): rebuild or re-extract the archive.")
    return questions


def make_prompt(spec: RunSpec, question: Question) -> Prompt:
    # abspath, not resolve(): no filesystem calls, which cost 0.25 s over 3,800 questions (bench/bench_engine.py)
    audio = [os.path.abspath(spec.archive / rel) for rel in question.audio]
    return Prompt(question_id=question.id, task=question.task, text=question.prompt, audio=audio, seed=spec.seed)


def _config(spec: RunSpec, backend, questions: list[Question]) -> dict:
    return {
        "spec": spec.to_json(),
        "backend": backend.provenance(),
        "harness": provenance.harness(),
        "archive": {"path": str(spec.archive), "manifest_sha256": manifest_sha256(spec.archive),
                    "benchmark": load_manifest(spec.archive).get("benchmark")},
        "prompt_template_sha256": provenance.prompt_hash([q.prompt for q in questions]),
        "judge": {"mode": spec.judge, "rules_version": RULES_VERSION, "model": None},
        "n_questions": len(questions),
    }


def _resume_state(spec: RunSpec, prefix: str) -> tuple[Path | None, list[Record]]:
    run_dir = latest_run_dir(spec.results_dir, prefix) if spec.resume else None
    if run_dir is None:
        return None, []
    kept = [r for r in read_records(run_dir / RESPONSES) if r.status in FINAL_STATUSES]
    return run_dir, kept


async def _session(spec: RunSpec, backend, questions: list[Question], run_dir: Path, done: set[str],
                   progress: bool | None) -> list[Record]:
    """Open the backend (it may refuse before any question is sent), record provenance, ask, close."""
    try:
        await backend.open()  # inside the try: a backend that fails to open still closes what it opened
        write_json(run_dir / CONFIG, _config(spec, backend, questions))
        writer = ResponsesWriter(run_dir / RESPONSES)
        try:
            todo = [(q, make_prompt(spec, q)) for q in questions if q.id not in done]
            return await run_questions(
                todo, backend, spec.model, concurrency=spec.concurrency or backend.default_concurrency,
                policy=RetryPolicy(), on_record=writer.append, max_error_rate=spec.max_error_rate,
                progress=progress,
            )
        finally:
            writer.close()
    finally:
        await backend.close()


def evaluate(spec: RunSpec, progress: bool | None = None) -> RunResult:
    questions = select_questions(spec)
    backend = get_model(spec.model).create(**spec.backend_overrides())
    prefix = spec.run_prefix(backend.backend_name)
    run_dir, kept = _resume_state(spec, prefix)
    run_dir = run_dir or new_run_dir(spec.results_dir, prefix)
    wanted = {q.id for q in questions}
    kept = [r for r in kept if r.id in wanted]
    rewrite_sorted(run_dir / RESPONSES, kept)  # drops a torn last line and records that are asked again
    new = asyncio.run(_session(spec, backend, questions, run_dir, {r.id for r in kept}, progress))
    records = sorted(kept + new, key=lambda r: r.id)
    rewrite_sorted(run_dir / RESPONSES, records)
    metrics = compute_metrics(records, spec.model, spec.task, spec.seed)
    write_json(run_dir / METRICS, metrics.model_dump(mode="json"))
    return RunResult(spec, run_dir, metrics, records, resumed=len(kept))
