"""The commands other than a run, as the command line prints them: each calls its typed function (api/) and prints
what it returned; `acousticbench COMMAND` and run.py's command flags both come here."""
from __future__ import annotations

from pathlib import Path


def list_models(archive: Path | None = None) -> int:
    from acousticbench.api.tools import models_table

    print(models_table(archive))
    return 0


def list_tasks() -> int:
    from acousticbench.api.tools import task_lines

    print("\n".join(task_lines()))
    return 0


def build_packs(archive: Path, zip_path: Path | None, benchmarks: list[str] | None = None) -> int:
    from acousticbench.api.packs import build_packs as build

    for line in build(archive, zip_path, benchmarks).lines:
        print(line, flush=True)
    return 0


def verify_packs(archive: Path, task: str) -> int:
    from acousticbench.api.packs import verify_packs as verify

    checked = verify(archive, task)
    for line in checked.lines:
        print(line)
    return checked.status


def extract_pack(zip_path: Path, archive: Path) -> int:
    from acousticbench.api.packs import extract_pack as extract

    print(extract(zip_path, archive).line())
    return 0


def export_packs(archive: Path, out: Path, task: str) -> int:
    from acousticbench.api.packs import export_packs as export

    print("\n".join(export(archive, out, task).lines()))
    return 0


def import_packs(export: Path, archive: Path) -> int:
    from acousticbench.api.packs import import_packs as rebuild

    print(rebuild(export, archive).line())
    return 0


def report(results_dirs: list[Path], out: Path, embed_audio: bool, references: Path | None) -> int:
    from acousticbench.api.tools import report as build_report

    built = build_report(*results_dirs, out=out, embed_audio=embed_audio, references=references)
    missing = f"; {built.missing_clips} clips not found" if built.missing_clips else ""
    print(f"Wrote {built.path} ({built.runs} runs, {built.records} answers, {built.bytes / 1e6:.1f} MB, "
          f"{built.seconds:.1f} s{missing}). Open it in a browser: file://{built.path.resolve()}")
    return 0


def promote_references(run_dirs: list[Path], root: Path | None) -> int:
    from acousticbench.api.tools import promote_references as promote

    for path in promote(*run_dirs, references=root):
        print(f"Wrote {path}")
    return 0
