"""AcousticBench's face: its options, its tasks in --task and --list-tasks, building, verifying, exporting and importing its
pack, and its own commands. Imports nothing heavy, so --help stays fast."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from acousticbench.benchmarks.acoustic.spec import NAME, AcousticOptions
from acousticbench.benchmarks.acoustic.tasks import TASKS
from acousticbench.benchmarks.face import Face, OwnCommand, PackCheck
from acousticbench.core.command_words import spelt
from acousticbench.core.errors import writable_folder


class AcousticFace(Face):
    """Its tasks listed one line each (with what a mono listener cannot hear), and its pack: built from the signal
    generators, verified against its manifest, exported and imported as a Hugging Face dataset."""

    def task_lines(self) -> list[str]:
        lines = []
        for t in TASKS.values():
            lines.append(f"{t.code}  {t.title:<14} {t.clips} clip{'s' if t.clips > 1 else ' '}  {t.question}  (A: {t.option_a})")
            if t.clips == 1:  # B is the channel mirror of A: left + right is the same for both answers
                lines.append(f"{'':<4}needs a stereo listener: a model that hears mono (`acousticbench models`: hears) is "
                             "at chance by construction, marked so and left out of averages")
        return lines

    def build_pack(self, root: Path, zip_path: Path | None, after_another: bool = False) -> str:
        from acousticbench.benchmarks.acoustic.pack.build import build_open_pack
        from acousticbench.benchmarks.acoustic.pack import load_manifest

        writable_folder(Path(root).absolute().parent, "the folder of --archive", "--archive")
        if zip_path:
            writable_folder(Path(zip_path).absolute().parent, "the folder of --zip", "--zip")
        digest = build_open_pack(root)
        n = load_manifest(root)["counts"]["questions"]
        return f"Built the open AcousticBench pack: {n} questions in {root} (manifest sha256 {digest[:16]})."

    def verify_pack(self, root: Path, tasks: list[str] | None, required: bool) -> PackCheck | None:
        """--verify-checksums of the given tasks (None: every task in the pack); None when the pack has no AcousticBench
        part and none was required."""
        from acousticbench.benchmarks.acoustic.pack import load_manifest
        from acousticbench.benchmarks.acoustic.pack.verify import pinned_pack_note, verify_checksums
        from acousticbench.packs.lines import MANIFEST

        from acousticbench.core.errors import ArchiveError

        if tasks is None and not required and not (Path(root) / MANIFEST).is_file():
            return None
        try:
            in_pack = list(load_manifest(root)["tasks"])
        except ArchiveError as err:
            if not (Path(root) / MANIFEST).is_file():
                raise  # no pack at all: a usage error (2), not a failed check
            return PackCheck((spelt(str(err)),), ok=False)  # a manifest that is not one: what verification finds
        report = verify_checksums(root, in_pack if tasks is None else tasks)
        note = pinned_pack_note(root)  # its fix names commands as the command line that asked spells them
        return PackCheck((*(spelt(line) for line in report.lines()), *([note] if note else [])), not report.failures)

    def export_dataset(self, root: Path, out: Path, tasks: list[str] | None, required: bool):
        """--export-dataset: the pack's tasks (None: all it has) as Hugging Face configs under `out`; None when the
        pack has no AcousticBench part and none was required."""
        from acousticbench.benchmarks.acoustic.pack.hf import export_pack
        from acousticbench.packs.lines import MANIFEST

        if tasks is None and not required and not (Path(root) / MANIFEST).is_file():
            return None
        return export_pack(root, out, tasks)

    def import_dataset(self, export: Path, part, archive: Path) -> str:
        """--import-dataset: rebuild the pack under `archive` (a staging folder) and verify it as --verify-checksums
        does, before it is moved into place."""
        from acousticbench.benchmarks.acoustic.pack.hf import import_pack
        from acousticbench.benchmarks.acoustic.pack.verify import verify_checksums
        from acousticbench.packs.hf_dataset import refuse_altered

        n = import_pack(export, part, archive)
        report = verify_checksums(archive, list(part.configs))
        refuse_altered(export, "pack", None if report.ok else report.lines()[0])
        return f"{part.pack} {part.version}, {n} questions, manifest sha256 {part.manifest_sha256[:16]}"


@dataclass(frozen=True)
class LmmsTasks:
    """What export-lmms-tasks wrote: lmms-eval task YAMLs (and their utils.py) under `out`."""

    written: list[Path]
    out: Path

    def line(self) -> str:
        return (f"Wrote {len(self.written)} files into {self.out}: lmms-eval --include_path {self.out} --tasks "
                "acousticbench (or acousticbench_<task>) --model ...")


def lmms_tasks(out: Path | str, archive: Path | str = "archive", task: str = "all") -> LmmsTasks:
    """lmms-eval task YAMLs for `task`'s AcousticBench tasks on `archive`, written into `out` (new or empty)."""
    from acousticbench.benchmarks import claim_tasks as claim_every
    from acousticbench.benchmarks.acoustic.integrations.lmms import export_lmms_tasks

    codes = claim_every(task)[NAME]  # an unknown name is one line suggesting the closest
    return LmmsTasks(export_lmms_tasks(Path(archive), Path(out), codes), Path(out))


def export_lmms(argv: list[str]) -> int:
    """acousticbench export-lmms-tasks DIR: prints what lmms_tasks wrote."""
    import argparse

    p = argparse.ArgumentParser(prog="acousticbench export-lmms-tasks", description=COMMANDS["export-lmms-tasks"].help)
    p.add_argument("out", type=Path, metavar="DIR")
    p.add_argument("--archive", type=Path, default=Path("archive"))
    p.add_argument("--task", default="all")
    args = p.parse_args(argv)
    print(lmms_tasks(args.out, args.archive, args.task).line())
    return 0


def judge(argv: list[str]) -> int:
    """acousticbench judge extract|agree ...: the A/B judge over JSONL files of answers."""
    from acousticbench.benchmarks.acoustic.judge.__main__ import main

    return main(argv)


def judged(file: Path | str, **how) -> list[dict]:
    """`judge extract`: every line of a JSONL file of answers with the judged option added."""
    from acousticbench.benchmarks.acoustic.judge.__main__ import judged as judge_file

    return judge_file(file, **how)


def labelings_agreement(first: Path | str, second: Path | str):
    """`judge agree`: how far two labelings of the same answers agree (judge.agreement.Agreement)."""
    from acousticbench.benchmarks.acoustic.judge.__main__ import labelings_agreement as agree

    return agree(first, second)


COMMANDS = {
    "export-lmms-tasks": OwnCommand("write lmms-eval task YAMLs (and their utils.py) for --task's AcousticBench tasks "
                                    "on --archive into DIR (new or empty): lmms-eval --include_path DIR", export_lmms,
                                    flag="--export-lmms-tasks", metavar="DIR", functions=(lmms_tasks,)),
    "judge": OwnCommand("label answers in JSONL files with the A/B judge (extract), or compare two labelings (agree)",
                        judge, functions=(judged, labelings_agreement)),
}
FACE = AcousticFace(tuple(TASKS), options=AcousticOptions, every="all", commands=COMMANDS,  # every: --task all
                    flags_hint="add one of its tasks to --task (e.g. --task rad); AudioICL episodes have no splits")
