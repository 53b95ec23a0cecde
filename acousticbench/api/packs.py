"""The pack commands as typed functions: build, verify, extract, export and import each return what they did (the
lines `acousticbench pack ...` prints, the numbers behind them) and print nothing."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acousticbench.benchmarks.face import PackCheck
from acousticbench.core.command_words import spelt
from acousticbench.core.errors import UserError, writable_folder


@dataclass(frozen=True)
class PackBuild:
    """What `pack build` built: a line per benchmark's pack, and the zip where one was asked for."""

    lines: tuple[str, ...]
    zip: Path | None


@dataclass(frozen=True)
class Extraction:
    """What `pack extract` wrote: how many files, from which zip, into which folder."""

    files: int
    zip: Path
    archive: Path

    def line(self) -> str:
        return spelt(f"Extracted {self.files} files from {self.zip} into {self.archive}. Check them with "
                     f"`acousticbench pack verify --archive {self.archive}`.")


@dataclass(frozen=True)
class DatasetExport:
    """What `pack export` wrote: each pack's part of the Hugging Face dataset folder (packs.hf_dataset), and how
    long it took."""

    out: Path
    parts: tuple
    seconds: float

    def lines(self) -> list[str]:
        done = []
        for part in self.parts:
            rows = ", ".join(f"{c} {sum(s.rows for s in splits.values())}" for c, splits in part.configs.items())
            done.append(f"Exported {part.pack} {part.version} (manifest sha256 {part.manifest_sha256[:16]}): "
                        f"{len(part.configs)} configs, rows per config: {rows}.")
        return [*done, spelt(f"Wrote {self.out} in {self.seconds:.1f} s: load a config with datasets.load_dataset("
                             f"{str(self.out)!r}, {next(iter(self.parts[0].configs))!r}); rebuild the pack with "
                             f"`acousticbench pack import {self.out} --archive PACK`.")]


@dataclass(frozen=True)
class DatasetImport:
    """What `pack import` rebuilt: each pack's summary (name, version, items, manifest digest)."""

    export: Path
    archive: Path
    packs: tuple[str, ...]

    def line(self) -> str:
        return spelt(f"Rebuilt {self.archive} from {self.export}: {'; '.join(self.packs)}. Every byte matched its "
                     f"manifest; check it again any time with `acousticbench pack verify --archive {self.archive}`.")


def build_packs(archive: Path | str = "archive", zip: Path | str | None = None,
                benchmarks: list[str] | None = None) -> PackBuild:
    """Every benchmark's open pack (or those named) into `archive`, each in its own place there, then the zip."""
    from acousticbench.benchmarks import faces
    from acousticbench.core.errors import unknown_name

    every = faces()
    for name in benchmarks or []:
        if name not in every:
            raise unknown_name("benchmark", name, list(every))
    chosen = [face for name, face in every.items() if not benchmarks or name in benchmarks]
    root, zip_path = Path(archive), None if zip is None else Path(zip)
    lines = [face.build_pack(root, zip_path, after_another=i > 0) for i, face in enumerate(chosen)]
    lines = [line for line in lines if line]  # a face written before build_pack returned its line says nothing
    if zip_path:
        from acousticbench.packs.extract import write_zip

        write_zip(root, zip_path)
        lines.append(f"Wrote {zip_path}.")
    return PackBuild(tuple(lines), zip_path)


def verify_packs(archive: Path | str = "archive", task: str = "all") -> PackCheck:
    """Every file of the packs checked against its checksum: 'all' checks every benchmark's pack where it exists (the
    first benchmark's is required when none does); task names check the packs of the benchmarks they belong to."""
    root = Path(archive)
    done = _each_pack(task, lambda face, tasks, required: face.verify_pack(root, tasks, required))
    return PackCheck(tuple(line for c in done for line in c.lines), all(c.ok for c in done))


def extract_pack(zip: Path | str, archive: Path | str = "archive") -> Extraction:
    """A pack zip safely extracted into `archive` (new or empty): every member vetted before anything is written."""
    from acousticbench.packs.extract import safe_extract

    writable_folder(Path(archive).absolute().parent, "the folder of --archive", "--archive")
    return Extraction(safe_extract(Path(zip), Path(archive)), Path(zip), Path(archive))


def export_packs(archive: Path | str, out: Path | str, task: str = "all") -> DatasetExport:
    """Each benchmark's pack (where it has an export) as one Hugging Face dataset folder, written in full or not at
    all; 'all' exports every pack found in `archive`, task names the packs they belong to."""
    from acousticbench.core.version import __version__
    from acousticbench.packs.hf_dataset import refuse_non_empty, write_index_and_card
    from acousticbench.packs.staging import staged_folder

    _needs_pyarrow()
    root, out = Path(archive), Path(out)
    refuse_non_empty(out, "acousticbench pack export", "dataset")
    started = time.monotonic()
    with staged_folder(out, "exporting") as staging:
        parts = _each_pack(task, lambda face, tasks, required: face.export_dataset(root, staging, tasks, required))
        write_index_and_card(staging, parts, __version__)
    return DatasetExport(out, tuple(parts), time.monotonic() - started)


def import_packs(export: Path | str, archive: Path | str = "archive") -> DatasetImport:
    """The pack(s) of an export rebuilt into `archive` (new or empty), each byte checked, all or nothing."""
    from acousticbench.benchmarks import faces
    from acousticbench.packs.hf_dataset import read_index, refuse_non_empty
    from acousticbench.packs.staging import staged_folder

    _needs_pyarrow()
    export, root = Path(export), Path(archive)
    parts = read_index(export)
    refuse_non_empty(root, "--archive", "rebuilt pack")
    every = faces()
    unknown = [p.benchmark for p in parts if p.benchmark not in every]
    if unknown:
        raise UserError(f"{export} holds a {unknown[0]} pack, which this harness cannot import: update acousticbench.")
    with staged_folder(root, "importing") as staging:
        done = [every[part.benchmark].import_dataset(export, part, staging) for part in parts]
    return DatasetImport(export, root, tuple(done))


def _each_pack(task: str, act: Callable[[Any, list[str] | None, bool], Any]) -> list:
    """act(face, its tasks, required) on each pack `task` names, what each returned (None: no such pack, not
    required): 'all' acts on every benchmark's pack where it exists, and requires the first benchmark's where none
    does; task names act on the packs of the benchmarks they belong to (an unknown name: a run's one line)."""
    from acousticbench.benchmarks import claim_tasks, faces

    every = faces()
    if task.strip() == "all":
        done = [act(face, None, False) for face in every.values()]
        if all(d is None for d in done):
            done = [act(next(iter(every.values())), None, True)]
    else:
        done = [act(every[name], tasks, True) for name, tasks in claim_tasks(task).items() if tasks]
    return [d for d in done if d is not None]


def _needs_pyarrow() -> None:
    import importlib.util

    if importlib.util.find_spec("pyarrow") is None:
        raise UserError("`acousticbench pack export` and `acousticbench pack import` need pyarrow: pip install -e "
                        "'.[hf]'.")
