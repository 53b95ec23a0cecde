"""What run.py does for AudioICL beyond running it (evaluate.py): the summary CSV, build and verify the pack, list the tasks."""
from __future__ import annotations

from pathlib import Path

from acousticbench.benchmarks.audioicl import TASKS, split_task_spec
from acousticbench.errors import UserError

SUMMARY = "audioicl_summary.csv"


def list_tasks() -> None:
    print("AudioICL (k-shot rule learning; --task NAME or audioicl; --shots 1,3,5):")
    print("  " + ", ".join(TASKS))


def write_summary(results_dir: Path, prompt_style: str, scoring: str, plot: Path | None) -> Path:
    from acousticbench.benchmarks.audioicl import summary

    rows = summary.summarise(summary.run_folder_answers(results_dir, prompt_style), scoring)
    path = Path(results_dir) / SUMMARY
    summary.write_csv(rows, path)
    print(f"AudioICL summary ({prompt_style} prompts, {scoring} scoring): {len(rows)} rows of model, shots, task, "
          f"accuracy, n -> {path}")
    if plot:
        summary.plot(rows, plot)
        print(f"Plot of accuracy against shots -> {plot}")
    return path


def build(archive: Path, after_acousticbench: bool = False) -> int:
    from acousticbench.benchmarks.audioicl.build import build_audioicl
    from acousticbench.benchmarks.audioicl.pack import load_manifest, pack_root

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
    from acousticbench.packs.lines import MANIFEST
    from acousticbench.benchmarks.audioicl.pack import MANIFEST as ICL_MANIFEST, pack_root

    if task_spec == "all":
        has_icl = (pack_root(archive) / ICL_MANIFEST).is_file()
        has_ab = (Path(archive) / MANIFEST).is_file()
        return has_icl, "all" if has_ab or not has_icl else ""
    icl, rest = split_task_spec(task_spec)
    return bool(icl), rest


def verify(archive: Path) -> int:
    from acousticbench.benchmarks.audioicl.pack import pack_root, pinned_note, verify_audioicl

    report = verify_audioicl(pack_root(archive))
    for line in report.lines():
        print(line)
    note = pinned_note(pack_root(archive))
    if note:
        print(note)
    return 0 if report.ok else 1
