"""What each run.py command does and prints; the CLI only parses flags and picks one of these."""
from __future__ import annotations

import sys
from dataclasses import dataclass
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
    from acousticbench.audioicl.commands import list_tasks as list_audioicl_tasks

    list_audioicl_tasks()
    return 0


def build_archive(root: Path, zip_path: Path | None) -> int:
    from acousticbench.archive.build import build_open_pack
    from acousticbench.archive.pack import load_manifest
    from acousticbench.audioicl.commands import build as build_audioicl

    digest = build_open_pack(root)
    n = load_manifest(root)["counts"]["questions"]
    print(f"Built the open AcousticBench pack: {n} questions in {root} (manifest sha256 {digest[:16]}).")
    build_audioicl(root, after_acousticbench=True)  # <archive>/audioicl, so the zip below holds both packs
    if zip_path:
        from acousticbench.archive.extract import write_zip

        write_zip(root, Path(zip_path))
        print(f"Wrote {zip_path}.")
    return 0


def extract(zip_path: Path, root: Path) -> int:
    from acousticbench.archive.extract import safe_extract

    n = safe_extract(zip_path, root)
    print(f"Extracted {n} files from {zip_path} into {root}. Check them with `python run.py --verify-checksums --archive {root}`.")
    return 0


def verify(root: Path, task_spec: str) -> int:
    from acousticbench.audioicl import commands as audioicl

    check_audioicl, task_spec = audioicl.verify_targets(root, task_spec)  # 'all' or AudioICL names: <archive>/audioicl
    status = _verify_acousticbench(root, task_spec) if task_spec else 0
    return max(status, audioicl.verify(root) if check_audioicl else 0)


def _verify_acousticbench(root: Path, task_spec: str) -> int:
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


@dataclass(frozen=True)
class ReferenceCheck:
    """--compare-reference: where the references are and the match rate (percent) below which to exit 1."""

    root: Path | None
    tolerance: float | None  # None: 100 for local and open-weight models, report only for API models

    def folder(self) -> Path:
        from acousticbench.reference import default_root

        return self.root or default_root()

    def threshold(self, model: str) -> float | None:
        from acousticbench.models.registry import get_model

        if self.tolerance is not None:
            return self.tolerance
        return 100.0 if get_model(model).family in ("local", "open-weight") else None


def run(specs: list[RunSpec], dry_run: bool, reference: ReferenceCheck | None = None) -> int:
    if dry_run:
        return _dry_run(specs)
    from acousticbench.engine import RunAborted
    from acousticbench.evaluate import evaluate
    from acousticbench.reference import reference_file

    # a missing reference is known before any question is asked
    ref_files = {spec: reference_file(reference.folder(), spec.model, spec.task, spec.seed) for spec in specs} if reference else {}
    status = 0
    for spec in specs:
        try:
            result = evaluate(spec)
        except RunAborted as err:
            print(f"error: {spec.model} on {spec.task} (seed {spec.seed}) stopped: {err}. "
                  "Fix the cause, then rerun with --resume.", file=sys.stderr)
            return 1
        print(summary_line(result))
        if result.judge_note and result.metrics.statuses.get("unparsed"):
            print(f"note: {result.judge_note}.", file=sys.stderr)
        if reference:
            status = max(status, _compare(result, ref_files[spec], reference.threshold(spec.model)))
    return status


def _compare(result, path: Path, threshold: float | None) -> int:
    from acousticbench.reference import compare_to_reference, write_comparison

    comparison = compare_to_reference(result.records, path, result.spec.split)
    write_comparison(result.run_dir, comparison)
    print(comparison.line())
    if comparison.note:
        print(f"Note: {comparison.note}.")
    for mismatch in comparison.mismatches[:10]:
        print(f"  {mismatch['id']}: reference {mismatch['reference']}, this run {mismatch['run']}")
    if len(comparison.mismatches) > 10:
        print(f"  ... and {len(comparison.mismatches) - 10} more in {result.run_dir / 'comparison.json'}")
    if threshold is not None and 100 * comparison.match_rate < threshold:
        print(f"error: the match rate is below the tolerance of {threshold:g}%; every mismatch is in "
              f"{result.run_dir / 'comparison.json'}.", file=sys.stderr)
        return 1
    return 0


def promote_references(run_dirs: list[Path], root: Path | None) -> int:
    from acousticbench.reference import promote

    for path in promote(run_dirs, root or Path("reference_trajectories")):
        print(f"Wrote {path}")
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
