"""Synthetic run folders, as run.py writes them, for the report's tests and its scale benchmark: AcousticBench runs
whose answers follow a known psychometric curve per (model, task), without asking any model."""
from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np

from acousticbench.benchmarks.acoustic.metrics import compute_metrics
from acousticbench.benchmarks.acoustic.metrics.psychometric import curve
from acousticbench.benchmarks.acoustic.records import JudgeInfo, Record
from acousticbench.benchmarks.acoustic.tasks import TASKS

PER_LEVEL, N_PROBE = 80, 25  # the open pack: 400 scored + 75 diagnostic questions per task
REPLIES = {"A": ["A", "The answer is A.", "**A**"], "B": ["B", "Answer: B", "B. The second clip"]}


def questions(task: str) -> list[dict]:
    """The open pack's shape: 5 levels x 80 (splits and answers alternating), then catch, identical and swap probes."""
    out = []
    for i in range(5 * PER_LEVEL):
        out.append({"id": f"{task}_{i + 1:04d}", "split": "train" if i % 2 else "eval", "kind": "scored",
                    "answer": "AB"[(i // 2) % 2], "meta": {"attribute": TASKS[task].attribute, "level": 1 + i // PER_LEVEL}})
    for j, probe in enumerate(["catch"] * N_PROBE + ["identical"] * N_PROBE + ["swap"] * N_PROBE):
        i = 5 * PER_LEVEL + j + 1
        twin = f"{task}_{j - 2 * N_PROBE + 1:04d}" if probe == "swap" else None
        out.append({"id": f"{task}_{i:04d}", "split": "train" if i % 2 else "eval", "kind": "diagnostic",
                    "answer": None if probe == "identical" else "A", "meta": {"attribute": TASKS[task].attribute,
                                                                              "level": None, "probe": probe,
                                                                              "twin_of": twin}})
    return out


def write_run(results: Path, model: str, task: str, seed: int, midpoint: float, split: str = "all",
              spread: float = 0.6, lapse: float = 0.02, archive: Path = Path("/nonexistent/archive")) -> Path:
    """One finished run folder of `model` on `task` whose answers are right with the curve's probability."""
    rng = np.random.default_rng(zlib.crc32(f"{model}|{task}|{seed}".encode()))
    records = []
    for q in questions(task):
        if split != "all" and q["split"] != split:
            continue
        level = q["meta"]["level"] or 1
        right = rng.random() < curve(level, midpoint, spread, lapse)
        chosen = (q["answer"] or "A") if right else "AB"[(q["answer"] or "A") == "A"]
        status, response, error = "answered", rng.choice(REPLIES[chosen]), None
        if rng.random() < 0.01:
            status, response, chosen, error = "error", None, None, "HTTP 503 from the server"
        elif rng.random() < 0.02:
            status, response, chosen = "unparsed", "Both clips sound alike to me.", None
        records.append(Record(id=q["id"], task=task, split=q["split"], kind=q["kind"], model=model, seed=seed,
                              prompt=TASKS[task].prompt(), audio=[f"{task}/audio/{q['id']}_1.wav",
                                                                   f"{task}/audio/{q['id']}_2.wav"],
                              response=response, chosen=chosen, answer=q["answer"],
                              correct=None if q["answer"] is None else chosen == q["answer"], status=status,
                              error=error, latency_s=0.5, judge=JudgeInfo(method="none" if chosen is None else "rules"),
                              meta=q["meta"]))
    run_dir = results / f"{model}-{task}-served-seed{seed}-20260101-000000"
    run_dir.mkdir(parents=True)
    (run_dir / "responses.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    spec = {"benchmark": "AcousticBench", "model": model, "task": task, "seed": seed, "split": split,
            "max_samples": None, "archive": str(archive), "results_dir": str(results)}
    config = {"benchmark": "AcousticBench", "spec": spec, "n_questions": len(records),
              "archive": {"path": str(archive), "absolute_path": str(archive), "manifest_sha256": "f" * 64},
              "harness": {"version": "0.1.0"}}
    (run_dir / "config.json").write_text(json.dumps(config))
    metrics = compute_metrics(records, model, task, seed)
    (run_dir / "metrics.json").write_text(metrics.model_dump_json())
    return run_dir
