"""Toy's part of the command line: its tasks, its options (none) and its pack."""
from __future__ import annotations

from pathlib import Path

from acousticbench.core.errors import UserError
from acousticbench.core.settings import BenchmarkOptions

TASKS = ["longer"]
Options = BenchmarkOptions  # no settings of its own: every field of the harness's applies
FLAGS_HINT = "add `longer` to --task"
COMMANDS: dict = {}


def claim_tasks(names: list[str]) -> list[str]:
    return [t for t in TASKS if t in names]


def task_names() -> list[str]:
    return TASKS


def task_lines() -> list[str]:
    return ["Toy (which of two tones lasts longer): longer"]


def build_pack(root: Path, zip_path: Path | None, after_another: bool = False) -> None:
    from toy_benchmark.benchmark import build

    print(f"Built the toy pack: {build(Path(root))} items.")


def verify_pack(root: Path, tasks: list[str] | None, required: bool) -> int | None:
    return None  # nothing pinned to check against: a real benchmark checks its manifest here


def export_dataset(root: Path, out: Path, tasks: list[str] | None, required: bool) -> None:
    if required:
        raise UserError("the Toy pack has no dataset export: leave `longer` out of --task.")


def import_dataset(export: Path, part, archive: Path) -> str:
    raise UserError("the Toy pack has no dataset import.")


def after_sweep(results: list, options: BenchmarkOptions) -> None:
    return None


def describe_item(item) -> str:
    return f" [audio: {', '.join(item.audio)}]"
