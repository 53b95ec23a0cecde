"""Face: a benchmark's part of the command line as one value, read without importing anything heavy. A benchmark
gives its task names; every other part has a default (its flags none, no pack of its own, nothing after a sweep), and
a benchmark that knows better subclasses Face and overrides that method."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError
from acousticbench.core.settings import BenchmarkOptions


@dataclass(frozen=True)
class OwnCommand:
    """A command a benchmark adds: `acousticbench NAME ARGS...` runs main(ARGS), which prints what its typed
    `functions` return (what a script calls; each prints nothing), and returns its exit status; `flag`, where given,
    is run.py's spelling of it, whose value (metavar: one; None: a switch) is passed first, followed by --archive
    and --task."""

    help: str
    main: Callable[[list[str]], int]
    flag: str | None = None
    metavar: str | None = None
    functions: tuple[Callable[..., Any], ...] = ()


@dataclass(frozen=True)
class PackCheck:
    """What checking a pack (or every pack, `pack verify`) found: the lines to show (each file that failed, the fix)
    and whether every file matched its checksum."""

    lines: tuple[str, ...]
    ok: bool

    @property
    def status(self) -> int:
        """The command's exit status: 0 every file matched, 1 some did not."""
        return 0 if self.ok else 1


@dataclass(frozen=True)
class Face:
    tasks: tuple[str, ...]  # its --task names, in the order runs and tables list them
    title: str = ""  # what --list-tasks says it is, before its task names
    options: type[BenchmarkOptions] = BenchmarkOptions  # its own settings, each field a flag; the base: none
    every: str | None = None  # the --task name that stands for all its tasks ('audioicl'), where it has one
    flags_hint: str = "add one of its tasks to --task"  # said when one of its flags is given without any
    commands: Mapping[str, OwnCommand] = field(default_factory=dict)  # commands of its own (build-audioicl)

    def claim_tasks(self, names: list[str]) -> list[str]:
        """Its tasks among --task's names, in its canonical order (case aside; `every`: all of them)."""
        asked = {n.strip().lower() for n in names}
        if self.every is not None and self.every.lower() in asked:
            return list(self.tasks)
        return [t for t in self.tasks if t.lower() in asked]

    def task_names(self) -> list[str]:
        """Every name it answers to in --task (for suggestions)."""
        return [*self.tasks, *([self.every] if self.every else [])]

    def task_lines(self) -> list[str]:
        """--list-tasks: its title and its tasks."""
        return [f"{self.title}: {', '.join(self.tasks)}" if self.title else ", ".join(self.tasks)]

    def build_pack(self, root: Path, zip_path: Path | None, after_another: bool = False) -> str:
        """Build its pack under `root`; the line saying what was built."""
        return f"{self.title or ', '.join(self.tasks)}: no pack of its own to build."

    def verify_pack(self, root: Path, tasks: list[str] | None, required: bool) -> PackCheck | None:
        """What checking its pack found; None: nothing to check, and nothing was asked of it by name."""
        if required:
            raise UserError(f"{', '.join(tasks or self.tasks)}: no checksums to verify (its pack pins none): "
                            "leave them out of --task.")
        return None

    def export_dataset(self, root: Path, out: Path, tasks: list[str] | None, required: bool) -> Any:
        """Its part of a dataset export; None: no part (refused when its tasks were asked for by name)."""
        if required:
            raise UserError(f"{', '.join(tasks or self.tasks)}: no dataset export: leave them out of --task.")
        return None

    def import_dataset(self, export: Path, part: Any, archive: Path) -> str:
        raise UserError(f"{export}: a {part.benchmark} pack, which has no dataset import.")

    def after_sweep(self, results: list, options: BenchmarkOptions) -> None:
        """What it writes over a whole sweep (AudioICL: its summary CSV); nothing."""
        return None

    def describe_item(self, item: Any) -> str:
        """A dry run's line tail for one item: its clips, where it names them."""
        audio = getattr(item, "audio", None)
        return f" [audio: {', '.join(audio)}]" if audio else ""
