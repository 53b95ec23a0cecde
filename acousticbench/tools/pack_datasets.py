"""The pack commands export and import (run.py --export-dataset, --import-dataset): every benchmark's pack as one Hugging Face dataset
folder and back, each through its face (the format itself is packs/hf_dataset.py)."""
from __future__ import annotations

from pathlib import Path

from acousticbench.core.command_words import spelt
from acousticbench.core.errors import UserError


def export_dataset(root: Path, out: Path, task_spec: str) -> int:
    """--export-dataset: each benchmark's pack (where it has an export) as one Hugging Face dataset folder, written
    in full or not at all; 'all' exports every pack found in --archive, task names the packs they belong to."""
    import time

    from acousticbench.core.version import __version__
    from acousticbench.benchmarks import claim_tasks, faces
    from acousticbench.packs.hf_dataset import refuse_non_empty, write_index_and_card
    from acousticbench.packs.staging import staged_folder

    refuse_non_empty(out, "acousticbench pack export", "dataset")
    every = faces()
    started = time.monotonic()
    with staged_folder(Path(out), "exporting") as staging:
        if task_spec.strip() == "all":
            parts = [face.export_dataset(root, staging, None, required=False) for face in every.values()]
            if all(p is None for p in parts):
                parts = [next(iter(every.values())).export_dataset(root, staging, None, required=True)]
        else:
            claimed = {name: tasks for name, tasks in claim_tasks(task_spec).items() if tasks}
            parts = [every[name].export_dataset(root, staging, tasks, required=True) for name, tasks in claimed.items()]
        parts = [p for p in parts if p is not None]
        write_index_and_card(staging, parts, __version__)
    for part in parts:
        rows = ", ".join(f"{c} {sum(s.rows for s in splits.values())}" for c, splits in part.configs.items())
        print(f"Exported {part.pack} {part.version} (manifest sha256 {part.manifest_sha256[:16]}): "
              f"{len(part.configs)} configs, rows per config: {rows}.")
    print(spelt(f"Wrote {out} in {time.monotonic() - started:.1f} s: load a config with "
                f"datasets.load_dataset({str(out)!r}, {next(iter(parts[0].configs))!r}); rebuild the pack with "
                f"`acousticbench pack import {out} --archive PACK`."))
    return 0


def import_dataset(export: Path, root: Path) -> int:
    """--import-dataset: the pack(s) of an export rebuilt into --archive, each byte checked, all or nothing."""
    from acousticbench.benchmarks import faces
    from acousticbench.packs.hf_dataset import read_index, refuse_non_empty
    from acousticbench.packs.staging import staged_folder

    parts = read_index(export)
    refuse_non_empty(root, "--archive", "rebuilt pack")
    every = faces()
    unknown = [p.benchmark for p in parts if p.benchmark not in every]
    if unknown:
        raise UserError(f"{export} holds a {unknown[0]} pack, which this harness cannot import: update acousticbench.")
    with staged_folder(Path(root), "importing") as staging:
        done = [every[part.benchmark].import_dataset(export, part, staging) for part in parts]
    print(spelt(f"Rebuilt {root} from {export}: {'; '.join(done)}. Every byte matched its manifest; check it again "
                f"any time with `acousticbench pack verify --archive {root}`."))
    return 0
