"""A sweep made ready before anything is asked or paid for: its cells loaded and checked, one backend per model
session made (with the endpoints its serving gives), every prompt checked against its model's limits, the results
folders writable and each run folder to continue found and locked; released however the command ends."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from acousticbench.core.errors import writable_folder
from acousticbench.run import context as run_context
from acousticbench.run.cells import groups_of, make_graders, prepare_cells
from acousticbench.run.runfolder import Cell, resume_target


@dataclass(frozen=True)
class PreparedSweep:
    """The cells of a command by model session, each session's backend (made, not opened) and each benchmark's
    grader."""

    cells: list[Cell]
    groups: dict[tuple, list[Cell]]  # (model, backend settings) -> its cells, in command order
    backends: dict[tuple, Any]
    graders: dict[str, Any]


def session_key(spec) -> tuple:
    """The model session a run belongs to: its model and backend settings (cells.groups_of groups by it)."""
    return spec.model, tuple(sorted(spec.backend_overrides().items(), key=str))


@contextmanager
def prepared_sweep(specs: list, served: Any = None) -> Iterator[PreparedSweep]:
    """Every check a sweep makes before its first request, in the order that refuses a command cheapest; `served`
    (run/serving.py) gives the endpoints of the models the command serves itself."""
    cells = prepare_cells(specs)
    groups = groups_of(cells)
    backends = {key: run_context.model_backend(key[0], {**dict(key[1]), **(served.overrides(key) if served else {})},
                                               group[0].spec.settings.archive)
                for key, group in groups.items()}  # keys and extras checked first
    for key, group in groups.items():
        for cell in group:  # a prompt over a model's limits stops the run here
            run_context.check_prompts(backends[key], (prompt for _, prompt in cell.prepared.items))
    for folder in dict.fromkeys(c.spec.settings.results_dir for c in cells):
        writable_folder(folder, "results folder", "--results-dir")  # before anything is paid for
    try:
        for key, group in groups.items():
            for cell in group:
                resume_target(cell, backends[key].backend_name)
        yield PreparedSweep(cells, groups, backends, make_graders(cells))
    finally:
        for cell in cells:
            if cell.lock is not None:
                cell.lock.release()
