"""What each run.py command does and prints; the CLI only parses flags and picks one of these."""
from __future__ import annotations

import sys
from pathlib import Path

from acousticbench.errors import UserError
from acousticbench.spec import RunSpec


def list_models() -> int:
    from acousticbench.models.registry import models_table

    print(models_table())
    return 0


def list_tasks() -> int:
    from acousticbench.tasks import TASKS

    for t in TASKS.values():
        print(f"{t.code}  {t.title:<14} {t.clips} clip{'s' if t.clips > 1 else ' '}  {t.question}  (A: {t.option_a})")
    return 0


def build_archive(root: Path, zip_path: Path | None) -> int:
    from acousticbench.archive.build import build_open_pack
    from acousticbench.archive.pack import load_manifest

    digest = build_open_pack(root, zip_path=zip_path)
    n = load_manifest(root)["counts"]["questions"]
    print(f"Built the open AcousticBench pack: {n} questions in {root} (manifest sha256 {digest[:16]}).")
    if zip_path:
        print(f"Wrote {zip_path}.")
    return 0


def extract(zip_path: Path, root: Path) -> int:
    from acousticbench.archive.extract import safe_extract

    n = safe_extract(zip_path, root)
    print(f"Extracted {n} files from {zip_path} into {root}. Check them with `python run.py --verify-checksums --archive {root}`.")
    return 0


def verify(root: Path, task_spec: str) -> int:
    from acousticbench.archive.pack import load_manifest
    from acousticbench.archive.verify import pinned_pack_note, verify_checksums
    from acousticbench.tasks import resolve_tasks

    in_pack = list(load_manifest(root).get("tasks", {}))
    tasks = in_pack if task_spec == "all" else resolve_tasks(task_spec)
    report = verify_checksums(root, tasks)
    for line in report.lines():
        print(line)
    note = pinned_pack_note(root)
    if note:
        print(note)
    return 1 if report.failures else 0


def run(specs: list[RunSpec], dry_run: bool) -> int:
    if dry_run:
        return _dry_run(specs)
    from acousticbench.engine import RunAborted
    from acousticbench.evaluate import evaluate

    for spec in specs:
        try:
            result = evaluate(spec)
        except RunAborted as err:
            print(f"error: {spec.model} on {spec.task} (seed {spec.seed}) stopped: {err}. "
                  "Fix the cause, then rerun with --resume.", file=sys.stderr)
            return 1
        print(summary_line(result))
    return 0


def summary_line(result) -> str:
    m, spec = result.metrics, result.spec
    s = m.scored
    acc = "n/a" if s.accuracy is None else f"{s.accuracy:.3f}"
    ci = f" [{s.wilson95.low:.3f}, {s.wilson95.high:.3f}]" if s.wilson95 else ""
    st = m.statuses
    resumed = f", {result.resumed} kept from the interrupted run" if result.resumed else ""
    return (f"{spec.model} on {spec.task} (seed {spec.seed}): accuracy {acc}{ci} over {s.n} scored questions; "
            f"{st.get('answered', 0)} answered, {st.get('unparsed', 0)} unparsed, {st.get('refused', 0)} refused, "
            f"{st.get('error', 0)} errors{resumed} -> {result.run_dir}")


def _dry_run(specs: list[RunSpec]) -> int:
    from acousticbench.evaluate import make_prompt, select_questions

    for spec in specs:
        questions = select_questions(spec)
        print(f"# {spec.model} on {spec.task} (seed {spec.seed}, split {spec.split}): {len(questions)} questions, nothing sent")
        for q in questions:
            prompt = make_prompt(spec, q)
            print(f"{q.id}: {' | '.join(prompt.text.splitlines())} [audio: {', '.join(q.audio)}]")
    if not specs:
        raise UserError("no runs to render.")
    return 0
