"""One run from start to end: pick the questions, ask the model, write the run folder, compute metrics."""
from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from acousticbench import provenance
from acousticbench.archive.pack import load_manifest, load_questions, manifest_sha256
from acousticbench.engine import RetryPolicy, run_questions
from acousticbench.errors import ArchiveError, UserError
from acousticbench.judge import Judge
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
    judge_note: str | None = None  # why labels may be missing (no LLM judge available)


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


def _config(spec: RunSpec, backend, judge: Judge, judge_note: str | None, questions: list[Question]) -> dict:
    return {
        "spec": spec.to_json(),
        "backend": backend.provenance(),
        "harness": provenance.harness(),
        "archive": {"path": str(spec.archive), "manifest_sha256": manifest_sha256(spec.archive),
                    "benchmark": load_manifest(spec.archive).get("benchmark")},
        "prompt_template_sha256": provenance.prompt_hash([q.prompt for q in questions]),
        "judge": {"requested": spec.judge, **judge.provenance(), "note": judge_note},
        "n_questions": len(questions),
    }


def make_judge(spec: RunSpec) -> tuple[Judge, str | None]:
    """The run's judge. --judge auto with no judge key or endpoint falls back to the rules and says so: what they
    cannot read stays unparsed (scripts/rejudge.py can judge it later); --judge llm without one is an error."""
    try:
        return Judge.create(spec.judge, spec.judge_model, base_url=spec.judge_endpoint), None
    except UserError:
        if spec.judge != "auto":
            raise
    return Judge("rules"), ("no LLM judge (set OPENAI_API_KEY or pass --judge-endpoint): answers the rules cannot "
                            "read stay unparsed; judge them later with scripts/rejudge.py")


def _open_run_dir(spec: RunSpec, backend, questions: list[Question]) -> tuple[Path, list[Record]]:
    """The run folder: the latest matching one with its finished records (--resume), or a new one."""
    prefix = spec.run_prefix(backend.backend_name)
    previous = latest_run_dir(spec.results_dir, prefix) if spec.resume else None
    if previous is None:
        return new_run_dir(spec.results_dir, prefix), []
    wanted = {q.id for q in questions}
    kept = [r for r in read_records(previous / RESPONSES) if r.status in FINAL_STATUSES and r.id in wanted]
    rewrite_sorted(previous / RESPONSES, kept)  # drops a torn last line and the records that are asked again
    return previous, kept


async def _evaluate(spec: RunSpec, questions: list[Question], backend, judge: Judge, judge_note: str | None,
                    progress: bool | None) -> RunResult:
    try:
        # opened before the run folder exists: a missing key or a dead server leaves nothing behind
        await backend.open()
        run_dir, kept = _open_run_dir(spec, backend, questions)
        write_json(run_dir / CONFIG, _config(spec, backend, judge, judge_note, questions))
        done = {r.id for r in kept}
        writer = ResponsesWriter(run_dir / RESPONSES)
        try:
            new = await run_questions(
                [(q, make_prompt(spec, q)) for q in questions if q.id not in done], backend, spec.model,
                concurrency=spec.concurrency or backend.default_concurrency, policy=RetryPolicy(),
                on_record=writer.append, max_error_rate=spec.max_error_rate, progress=progress, judge=judge,
            )
        finally:
            writer.close()
    finally:
        await backend.close()  # also when open() failed: it may have opened clients
        await judge.aclose()
    records = sorted(kept + new, key=lambda r: r.id)
    rewrite_sorted(run_dir / RESPONSES, records)
    metrics = compute_metrics(records, spec.model, spec.task, spec.seed)
    write_json(run_dir / METRICS, metrics.model_dump(mode="json"))
    return RunResult(spec, run_dir, metrics, records, resumed=len(kept), judge_note=judge_note)


def evaluate(spec: RunSpec, progress: bool | None = None) -> RunResult:
    questions = select_questions(spec)
    backend = get_model(spec.model).create(**spec.backend_overrides())
    judge, judge_note = make_judge(spec)
    return asyncio.run(_evaluate(spec, questions, backend, judge, judge_note, progress))
