"""What run.py does for AudioICL: run episodes, build and verify the pack, list the tasks; and what it prints."""
from __future__ import annotations

import sys
from pathlib import Path

from acousticbench.audioicl import TASKS, split_task_spec
from acousticbench.errors import UserError

SUMMARY = "audioicl_summary.csv"


def list_tasks() -> None:
    print("AudioICL (k-shot rule learning; --task NAME or audioicl; --shots 1,3,5):")
    print("  " + ", ".join(TASKS))


def summary_line(result) -> str:
    m, spec = result.metrics, result.spec
    acc = "n/a" if m.accuracy is None else f"{m.accuracy:.3f}"
    ci = f" [{m.wilson95.low:.3f}, {m.wilson95.high:.3f}]" if m.wilson95 else ""
    st = m.statuses
    resumed = f", {result.resumed} kept from the interrupted run" if result.resumed else ""
    return (f"{spec.model} on {spec.task} k={spec.shots} (seed {spec.seed}): accuracy {acc}{ci} over {m.n} episodes; "
            f"{st.get('answered', 0)} answered, {st.get('refused', 0)} refused, {st.get('error', 0)} errors"
            f"{resumed} -> {result.run_dir}")


def run(specs: list, *, dry_run: bool = False, plot: Path | None = None) -> int:
    """Every AudioICL run, then the summary CSV (and plot) of every run folder with this prompt style."""
    if dry_run:
        return _dry_run(specs)
    from acousticbench.audioicl.runs import run_all
    from acousticbench.engine import RunAborted

    try:
        run_all(specs, on_result=lambda result: print(summary_line(result), flush=True))
    except RunAborted as err:
        print(f"error: an AudioICL run stopped: {err}. Fix the cause, then rerun with --resume.", file=sys.stderr)
        return 1
    write_summary(specs[0].results_dir, specs[0].prompt_style, specs[0].scoring, plot)
    return 0


def write_summary(results_dir: Path, prompt_style: str, scoring: str, plot: Path | None) -> Path:
    from acousticbench.audioicl import summary

    rows = summary.summarise(summary.run_folder_answers(results_dir, prompt_style), scoring)
    path = Path(results_dir) / SUMMARY
    summary.write_csv(rows, path)
    print(f"AudioICL summary ({prompt_style} prompts, {scoring} scoring): {len(rows)} rows of model, shots, task, "
          f"accuracy, n -> {path}")
    if plot:
        summary.plot(rows, plot)
        print(f"Plot of accuracy against shots -> {plot}")
    return path


def _dry_run(specs: list) -> int:
    from acousticbench.audioicl.runs import prepare

    cache: dict = {}
    for spec in specs:
        prep = prepare(spec, cache)
        print(f"# {spec.model} on {spec.task} k={spec.shots} (seed {spec.seed}, {spec.prompt_style} prompts): "
              f"{len(prep.items)} episodes, nothing sent")
        for episode, prompt in prep.items:
            print(f"{episode.id}: {' | '.join(prompt.text.splitlines())}")
    return 0


def build(archive: Path, after_acousticbench: bool = False) -> int:
    from acousticbench.audioicl.build import build_audioicl
    from acousticbench.audioicl.pack import load_manifest, pack_root

    try:
        digest = build_audioicl(archive)
    except UserError as err:
        if after_acousticbench:
            raise UserError(f"the AcousticBench pack is built; the AudioICL pack is not: {err} Then run "
                            "`python run.py --build-audioicl`.") from None
        raise
    counts = load_manifest(pack_root(archive))["counts"]
    print(f"Built the open AudioICL pack: {counts['episodes']} episodes (k = 1..5), {counts['audio_files']} clips in "
          f"{pack_root(archive)} (manifest sha256 {digest[:16]}).")
    return 0


def verify_targets(archive: Path, task_spec: str) -> tuple[bool, str]:
    """(whether to verify the AudioICL pack, the --task left for AcousticBench). 'all' covers both packs, each
    where it exists; 'audioicl' or an AudioICL task name, the AudioICL pack."""
    from acousticbench.archive.pack import MANIFEST
    from acousticbench.audioicl.pack import MANIFEST as ICL_MANIFEST, pack_root

    if task_spec == "all":
        has_icl = (pack_root(archive) / ICL_MANIFEST).is_file()
        has_ab = (Path(archive) / MANIFEST).is_file()
        return has_icl, "all" if has_ab or not has_icl else ""
    icl, rest = split_task_spec(task_spec)
    return bool(icl), rest


def verify(archive: Path) -> int:
    from acousticbench.audioicl.pack import pack_root, pinned_note, verify_audioicl

    report = verify_audioicl(pack_root(archive))
    for line in report.lines():
        print(line)
    note = pinned_note(pack_root(archive))
    if note:
        print(note)
    return 0 if report.ok else 1
