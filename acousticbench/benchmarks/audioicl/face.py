"""AudioICL's part of run.py: its flags, its tasks in --task and --list-tasks, its runs (task x k x seed), building
and verifying its pack, and the summary CSV after a sweep. Imports nothing heavy, so --help stays fast."""
from __future__ import annotations

import argparse
from pathlib import Path

from acousticbench.benchmarks.audioicl import ALL, SHOTS, TASKS, parse_shots, split_task_spec
from acousticbench.core.errors import UserError

SUMMARY = "audioicl_summary.csv"

# flags that apply to AudioICL runs only: refused (one line) when --task names none
OWN_FLAGS = ("shots", "prompt_style", "icl_meta", "icl_base", "icl_pad", "morse_alphabet", "scoring", "plot")
FLAGS_HINT = "add one to --task (e.g. --task AudioCount, or audioicl for all nine)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    icl = parser.add_argument_group("AudioICL (--task AudioCount, ..., or audioicl for all nine)")
    icl.add_argument("--shots", help="comma list of k, e.g. 1,3,5 (default 1,2,3,4,5)")
    icl.add_argument("--prompt-style", choices=["specific", "general", "none"],
                     help="instruction before the demos: per task (default), one for all tasks, or none")
    icl.add_argument("--icl-meta", type=Path, metavar="DIR", help="folder of meta_k{k}.jsonl (default <archive>/audioicl/meta)")
    icl.add_argument("--icl-base", type=Path, metavar="DIR",
                     help="folder the episodes' audio paths are relative to, the one holding data/ (default <archive>/audioicl)")
    icl.add_argument("--icl-pad", action="store_true",
                     help="pad every clip of an episode with silence to the longest (off: it erases AudioLength's cue)")
    icl.add_argument("--morse-alphabet", type=Path, metavar="DIR",
                     help="A.wav..Z.wav sent before the MorseCode demos (the open pack's: <archive>/audioicl/data/MorseCode/alphabet)")
    icl.add_argument("--scoring", choices=["strict", "lenient"],
                     help="strict: the public eval_str.py rules (default); lenient: number words count too")
    icl.add_argument("--plot", type=Path, metavar="FILE.png", help="after the runs, plot accuracy against shots per task")
    parser.add_argument_group("commands").add_argument(
        "--build-audioicl", action="store_true", help="build the open AudioICL pack into <archive>/audioicl")


def claim_tasks(names: list[str]) -> list[str]:
    """The names of --task that are AudioICL's, as canonical task names in the public order ('audioicl': all nine)."""
    icl, _ = split_task_spec(",".join(names))
    return icl


def task_names() -> list[str]:
    return [*TASKS, ALL]


def task_lines() -> list[str]:
    return ["AudioICL (k-shot rule learning; --task NAME or audioicl; --shots 1,3,5):", "  " + ", ".join(TASKS)]


def specs(args: argparse.Namespace, model: str, tasks: list[str], seeds: list[int]) -> list:
    """The AudioICL runs of one model: task x k x seed."""
    from acousticbench.benchmarks.audioicl.spec import ICLRunSpec

    if not tasks:
        return []
    if args.plot and not args.dry_run:
        import importlib.util

        if importlib.util.find_spec("matplotlib") is None:  # known now, not after every run has been paid for
            raise UserError("--plot needs matplotlib: pip install -e '.[plot]', or drop --plot.")
    shots = parse_shots(args.shots) if args.shots else list(SHOTS)
    return [
        ICLRunSpec(model=model, task=task, shots=k, seed=seed, max_samples=args.max_samples,
                   concurrency=args.concurrency, archive=args.archive, results_dir=args.results_dir,
                   meta_dir=args.icl_meta, base_dir=args.icl_base, prompt_style=args.prompt_style or "specific",
                   scoring=args.scoring or "strict", pad=args.icl_pad, morse_alphabet=args.morse_alphabet,
                   resume=args.resume, max_error_rate=args.max_error_rate, endpoint=args.endpoint,
                   api_model=args.api_model)
        for task in tasks for k in shots for seed in seeds
    ]


def write_summary(results_dir: Path, prompt_style: str, scoring: str, plot: Path | None) -> Path:
    import sys

    from acousticbench.benchmarks.audioicl import summary

    torn: list = []
    rows = summary.summarise(summary.run_folder_answers(results_dir, torn=torn), scoring, by_run=True)  # every run folder's rows
    path = Path(results_dir) / SUMMARY
    summary.write_csv(rows, path)
    for line in torn:
        print(f"note: {line.describe()}; left out of the summary until run.py --resume asks it again.", file=sys.stderr)
    print(f"AudioICL summary ({prompt_style} prompts, {scoring} scoring), with every earlier AudioICL run in "
          f"{results_dir}: {len(rows)} rows of model, shots, task, accuracy, n, prompt style, scoring -> {path}")
    if plot:
        summary.plot([r for r in rows if (r["prompt_style"], r["scoring"]) == (prompt_style, scoring)], plot)
        print(f"Plot of accuracy against shots -> {plot}")
    return path


def build_pack(archive: Path, zip_path: Path | None = None, after_another: bool = False) -> None:
    from acousticbench.benchmarks.audioicl.build import build_audioicl
    from acousticbench.benchmarks.audioicl.pack import load_manifest, pack_root

    try:
        digest = build_audioicl(archive)
    except UserError as err:
        if after_another:
            raise UserError(f"the other packs are built; the AudioICL pack is not: {err} Then run "
                            "`python run.py --build-audioicl`.") from None
        raise
    counts = load_manifest(pack_root(archive))["counts"]
    print(f"Built the open AudioICL pack: {counts['episodes']} episodes (k = 1..5), {counts['audio_files']} clips in "
          f"{pack_root(archive)} (manifest sha256 {digest[:16]}).")


def verify_pack(archive: Path, tasks: list[str] | None, required: bool) -> int | None:
    """--verify-checksums of the AudioICL pack (the whole pack, whatever AudioICL tasks are named); None when there is
    none and none was required."""
    from acousticbench.benchmarks.audioicl.pack import MANIFEST, pack_root, pinned_note, verify_audioicl

    if not required and not (pack_root(archive) / MANIFEST).is_file():
        return None

    report = verify_audioicl(pack_root(archive))
    for line in report.lines():
        print(line)
    note = pinned_note(pack_root(archive))
    if note:
        print(note)
    return 0 if report.ok else 1


def export_dataset(archive: Path, out: Path, tasks: list[str] | None, required: bool):
    """--export-dataset: the AudioICL pack as a `clips` config and one config per task (tasks None: all it has);
    None when the archive holds no AudioICL pack and none was required."""
    from acousticbench.benchmarks.audioicl.hf import export_pack
    from acousticbench.benchmarks.audioicl.pack import MANIFEST, pack_root

    if tasks is None and not required and not (pack_root(archive) / MANIFEST).is_file():
        return None
    return export_pack(archive, out, tasks)


def import_dataset(export: Path, part, archive: Path) -> str:
    """--import-dataset: rebuild <archive>/audioicl (archive: a staging folder) and verify it as --verify-checksums
    does, before it is moved into place."""
    from acousticbench.benchmarks.audioicl.hf_import import import_pack
    from acousticbench.benchmarks.audioicl.pack import pack_root, verify_audioicl
    from acousticbench.packs.hf_dataset import refuse_altered

    n = import_pack(export, part, archive)
    report = verify_audioicl(pack_root(archive))
    refuse_altered(export, "AudioICL pack", None if report.ok else report.failures[0])
    return f"{part.pack} {part.version}, {n} episodes and {report.n_files} files, manifest sha256 {part.manifest_sha256[:16]}"


def after_sweep(results: list, args) -> None:
    """The summary CSV of every AudioICL run under the results folder (and the plot, with --plot)."""
    specs = [r.spec for r in results if r.spec.benchmark == "AudioICL"]
    if specs:
        write_summary(specs[0].results_dir, specs[0].prompt_style, specs[0].scoring, getattr(args, "plot", None))


def describe_item(item) -> str:
    return ""


def command(args):
    """AudioICL's own command flag: --build-audioicl."""
    if getattr(args, "build_audioicl", False):
        return lambda: build_pack(args.archive)
    return None
