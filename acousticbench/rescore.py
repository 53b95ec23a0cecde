"""Second chances for null answers in finished runs: re-judge them (rejudge.py) or ask the model again (rerun_nones.py)."""
from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from acousticbench.engine import RetryPolicy, run_questions
from acousticbench.errors import UserError
from acousticbench.judge import Judge, JudgeFailed
from acousticbench.metrics import compute_metrics
from acousticbench.records import JudgeInfo, Prompt, Question, Record, Reply
from acousticbench.results import CONFIG, METRICS, RESPONSES, read_records, rewrite_sorted, write_json

BACKUP_SUFFIX = ".orig"


@dataclass(frozen=True)
class RunFile:
    """A responses.jsonl with its run folder's config (needed to rewrite metrics.json)."""

    path: Path
    config: dict
    records: list[Record]

    @classmethod
    def load(cls, path: Path) -> "RunFile":
        path = path / RESPONSES if path.is_dir() else path
        config_path = path.parent / CONFIG
        if not path.is_file() or not config_path.is_file():
            raise UserError(f"{path} is not the responses.jsonl of a run folder (with its config.json beside it).")
        return cls(path, json.loads(config_path.read_text(encoding="utf-8")), read_records(path))


def status_counts(records: list[Record]) -> Counter:
    counts = Counter(r.status for r in records)
    counts["null chosen"] = sum(1 for r in records if r.chosen is None)
    return counts


def change_line(name: str, before: list[Record], after: list[Record]) -> str:
    old, new = status_counts(before), status_counts(after)
    keys = ("answered", "unparsed", "refused", "error", "null chosen")
    return f"{name}: " + ", ".join(f"{k} {old[k]} -> {new[k]}" for k in keys)


def save(run: RunFile, records: list[Record]) -> None:
    """Keep the first original beside the file, replace the file atomically, and rewrite metrics.json."""
    backup = run.path.with_name(run.path.name + BACKUP_SUFFIX)
    if not backup.exists():  # a second run must not overwrite the true original
        shutil.copy2(run.path, backup)
    rewrite_sorted(run.path, records)
    spec = run.config["spec"]
    metrics = compute_metrics(sorted(records, key=lambda r: r.id), spec["model"], spec["task"], spec["seed"])
    write_json(run.path.parent / METRICS, metrics.model_dump(mode="json"))


def relabel(record: Record, judgement) -> Record:
    return record.model_copy(update={
        "chosen": judgement.chosen, "status": judgement.status,
        "correct": None if record.answer is None else judgement.chosen == record.answer,
        "judge": JudgeInfo(method=judgement.method, model=judgement.model),
    })


async def rejudge(records: list[Record], judge: Judge) -> list[Record]:
    """The judge's reading (an LLM judge: Judge.create("llm", ...)) of every null answer that has text; the model
    is not asked again."""
    out = []
    for record in records:
        if record.chosen is None and record.response and record.response.strip():
            try:
                judgement = await judge.judge(record.prompt, Reply(text=record.response))
            except JudgeFailed:
                judgement = None  # no verdict: the record stays as it was
            out.append(relabel(record, judgement) if judgement else record)
        else:
            out.append(record)
    return out


def question_of(record: Record) -> Question:
    """The question a record answered, rebuilt from the record (its checksums are not needed to ask again)."""
    return Question(id=record.id, task=record.task, split=record.split, kind=record.kind, prompt=record.prompt,
                    audio=record.audio, answer=record.answer, meta=record.meta)


async def ask_again(records: list[Record], backend, judge: Judge, archive: Path, concurrency: int) -> list[Record]:
    """One more request for each null record; attempts add up, everything else is the new answer's."""
    todo = [r for r in records if r.chosen is None]
    items = [(question_of(r), Prompt(question_id=r.id, task=r.task, text=r.prompt, seed=r.seed,
                                     audio=[os.path.abspath(archive / a) for a in r.audio])) for r in todo]
    fresh = await run_questions(items, backend, todo[0].model if todo else "", concurrency=concurrency,
                                policy=RetryPolicy(), on_record=lambda r: None, judge=judge)
    previous = {r.id: r.attempts for r in todo}
    by_id = {r.id: r for r in records}
    for record in fresh:
        by_id[record.id] = record.model_copy(update={"attempts": previous[record.id] + record.attempts})
    return list(by_id.values())

