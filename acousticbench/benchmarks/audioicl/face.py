"""AudioICL's face: its options, its tasks in --task and --list-tasks, building, verifying, exporting and importing its
pack, the summary CSV after a sweep, and its own commands. Imports nothing heavy, so --help stays fast."""
from __future__ import annotations

from pathlib import Path

from acousticbench.benchmarks.audioicl import ALL, TASKS
from acousticbench.benchmarks.audioicl.spec import NAME, ICLOptions
from acousticbench.benchmarks.face import Face, OwnCommand, PackCheck
from acousticbench.core.command_words import spelt
from acousticbench.core.errors import UserError
from acousticbench.core.reporter import say, warn

SUMMARY = "audioicl_summary.csv"


def write_summary(results_dir: Path, prompt_style: str, scoring: str, plot: Path | None) -> Path:
    
    from acousticbench.benchmarks.audioicl import summary

    torn: list = []
    rows = summary.summarise(summary.run_folder_answers(results_dir, torn=torn), scoring, by_run=True)  # every run folder's rows
    path = Path(results_dir) / SUMMARY
    summary.write_csv(rows, path)
    for line in torn:
        warn(f"note: {line.describe()}; left out of the summary until run.py --resume asks it again.")
    say(f"AudioICL summary ({prompt_style} prompts, {scoring} scoring), with every earlier AudioICL run in "
          f"{results_dir}: {len(rows)} rows of {', '.join(summary.RUN_COLUMNS)} -> {path}")
    if plot:
        summary.plot([r for r in rows if (r["prompt_style"], r["scoring"]) == (prompt_style, scoring)], plot)
        say(f"Plot of accuracy against shots -> {plot}")
    return path


class ICLFace(Face):
    """Its nine tasks on one line, its pack under <archive>/audioicl, and the summary CSV after a sweep."""

    def task_lines(self) -> list[str]:
        return ["AudioICL (k-shot rule learning; --task NAME or audioicl; --shots 1,3,5):", "  " + ", ".join(TASKS)]

    def build_pack(self, archive: Path, zip_path: Path | None = None, after_another: bool = False) -> str:
        from acousticbench.benchmarks.audioicl.build import build_audioicl
        from acousticbench.benchmarks.audioicl.pack import load_manifest, pack_root

        try:
            digest = build_audioicl(archive)
        except UserError as err:
            if after_another:
                raise UserError(f"the other packs are built; the AudioICL pack is not: {err} Then run "
                                "`acousticbench build-audioicl`.") from None
            raise
        counts = load_manifest(pack_root(archive))["counts"]
        return (f"Built the open AudioICL pack: {counts['episodes']} episodes (k = 1..5), {counts['audio_files']} "
                f"clips in {pack_root(archive)} (manifest sha256 {digest[:16]}).")

    def verify_pack(self, archive: Path, tasks: list[str] | None, required: bool) -> PackCheck | None:
        """--verify-checksums of the AudioICL pack (the whole pack, whatever AudioICL tasks are named); None when there is
        none and none was required."""
        from acousticbench.benchmarks.audioicl.pack import MANIFEST, pack_root, pinned_note, verify_audioicl

        if not required and not (pack_root(archive) / MANIFEST).is_file():
            return None

        report = verify_audioicl(pack_root(archive))
        note = pinned_note(pack_root(archive))  # its fix names commands as the command line that asked spells them
        return PackCheck((*(spelt(line) for line in report.lines()), *([note] if note else [])), report.ok)

    def export_dataset(self, archive: Path, out: Path, tasks: list[str] | None, required: bool):
        """--export-dataset: the AudioICL pack as a `clips` config and one config per task (tasks None: all it has);
        None when the archive holds no AudioICL pack and none was required."""
        from acousticbench.benchmarks.audioicl.hf import export_pack
        from acousticbench.benchmarks.audioicl.pack import MANIFEST, pack_root

        if tasks is None and not required and not (pack_root(archive) / MANIFEST).is_file():
            return None
        return export_pack(archive, out, tasks)

    def import_dataset(self, export: Path, part, archive: Path) -> str:
        """--import-dataset: rebuild <archive>/audioicl (archive: a staging folder) and verify it as --verify-checksums
        does, before it is moved into place."""
        from acousticbench.benchmarks.audioicl.hf_import import import_pack
        from acousticbench.benchmarks.audioicl.pack import pack_root, verify_audioicl
        from acousticbench.packs.hf_dataset import refuse_altered

        n = import_pack(export, part, archive)
        report = verify_audioicl(pack_root(archive))
        refuse_altered(export, "AudioICL pack", None if report.ok else report.failures[0])
        return f"{part.pack} {part.version}, {n} episodes and {report.n_files} files, manifest sha256 {part.manifest_sha256[:16]}"

    def after_sweep(self, results: list, options: ICLOptions) -> None:
        """The summary CSV of every AudioICL run under the results folder (and the plot, with --plot)."""
        specs = [r.spec for r in results if r.spec.benchmark == NAME]
        if specs:
            write_summary(specs[0].settings.results_dir, options.prompt_style, options.scoring, options.plot)


def build_command(argv: list[str]) -> int:
    """acousticbench build-audioicl: the open AudioICL pack into <archive>/audioicl."""
    import argparse

    p = argparse.ArgumentParser(prog="acousticbench build-audioicl", description=COMMANDS["build-audioicl"].help)
    p.add_argument("--archive", type=Path, default=Path("archive"))
    p.add_argument("--task", default="all", help=argparse.SUPPRESS)
    print(build_open_pack(p.parse_args(argv).archive))
    return 0


def build_open_pack(archive: Path | str = "archive") -> str:
    """`build-audioicl`: the open AudioICL pack into <archive>/audioicl; the line saying what was built."""
    return FACE.build_pack(Path(archive))


def eval_str(argv: list[str]) -> int:
    """acousticbench eval-str: the public scorer's CSV of run folders and public result files."""
    from acousticbench.benchmarks.audioicl.eval_str import main

    return main(argv)


def string_match_scores(inp: Path | str, out: Path | str, **how):
    """`eval-str`: the CSV of string-match scores written, and its rows (eval_str.StringMatchScores)."""
    from acousticbench.benchmarks.audioicl.eval_str import string_match_scores as scores

    return scores(inp, out, **how)


COMMANDS = {"build-audioicl": OwnCommand("build the open AudioICL pack into <archive>/audioicl", build_command,
                                         flag="--build-audioicl", functions=(build_open_pack,)),
            "eval-str": OwnCommand("AudioICL string-match scores: a CSV of model, shots, task, accuracy, n from run "
                                   "folders and public result files (scripts/eval_str.py)", eval_str,
                                   functions=(string_match_scores,))}
FACE = ICLFace(TASKS, options=ICLOptions, every=ALL, commands=COMMANDS,  # every: --task audioicl, all nine
               flags_hint="add one to --task (e.g. --task AudioCount, or audioicl for all nine)")
