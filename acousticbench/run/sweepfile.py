"""The sweep file: `<results>/sweep-<YYYYMMDD-HHMMSS>.json`, one per command that runs models, naming every cell of
the sweep (model, benchmark, task, its variant such as AudioICL's shots, seed), its run folder, status, accuracy,
standard error and n, the command line and the closing table. It is written when the first run folder opens (every
cell pending; a command refused before, by a dead judge or server, leaves none) and again as cells finish,
atomically, so a killed sweep leaves a file naming what finished."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError
from acousticbench.run.results import claim_new, write_json
from acousticbench.run.runfolder import command_line, now

PREFIX = "sweep-"
# a rewrite is skipped (left for a later one) while the file's last write took over 1/20 of the time since it
COST_SHARE = 0.05


def claim_path(folder: Path) -> Path:
    """A sweep file name no other command holds: sweep-<stamp>.json, or -1, -2 ... after it for the same second."""
    def create(path: Path) -> None:
        path.open("x", encoding="utf-8").close()  # exclusive: two sweeps in one second never share a name

    return claim_new(folder, lambda stamp: f"{PREFIX}{stamp}.json", create, "sweeps started")


def _planned(spec: Any) -> dict[str, Any]:
    return {"model": spec.model, "benchmark": spec.benchmark, "task": spec.task, **spec.reference_fields(),
            **spec.kind_field(), "seed": spec.seed, "control": spec.control, "folder": None, "status": "pending",
            "accuracy": None, "figure": None, "stderr": None, "n": None, "errors": None, "note": None}


def _finished(result: Any, home: Path) -> dict[str, Any]:
    """done: asked and finished; resumed: finished, continuing an earlier folder; skipped: --resume found it
    complete and asked nothing; failed: stopped (its error budget, its model's server or key). The folder is
    relative to the sweep file's (its name, beside it), so the results folder can move."""
    folder = None if result.run_dir is None else os.path.relpath(result.run_dir, home)
    if result.error:
        return {"folder": folder, "status": "failed", "note": result.error}
    bench = result.benchmark
    accuracy, n = bench.headline(result.metrics)
    status = ("skipped" if result.resumed == len(result.records) else "resumed") if result.resumed else "done"
    return {"folder": folder, "status": status, "accuracy": accuracy, "figure": bench.headline_text(result.metrics),
            "stderr": None if accuracy is None else bench.headline_stderr(result.metrics), "n": n,
            "errors": bench.headline_errors(result.metrics), "note": result.over_budget}


class SweepFile:
    """The one sweep file of a command, from its specs (in command order) to its closing table."""

    def __init__(self, folder: Path, specs: list):
        self.folder, self.path = folder, None
        self._specs = list(specs)
        self._taken: set[int] = set()
        self.data: dict[str, Any] = {"command": command_line(), "started_at": now(), "finished_at": None,
                                     "state": "running", "cells": [_planned(s) for s in specs], "table": None}
        self._last_write, self._cost, self._dirty = 0.0, 0.0, False

    def open(self) -> None:
        """Claim the file and write it, every cell pending: when the sweep's first run folder has opened."""
        if self.path is None:
            self.path = claim_path(self.folder)
            self._write()

    def _index(self, spec: Any) -> int:
        for i, planned in enumerate(self._specs):
            if i not in self._taken and (planned is spec or planned == spec):
                self._taken.add(i)
                return i
        raise KeyError(spec)

    def finished(self, result: Any) -> None:
        """A cell finished or failed: its row, then the file rewritten unless that would cost over COST_SHARE."""
        self.data["cells"][self._index(result.spec)].update(_finished(result, self.folder))
        if self.path is None:  # no run folder opened (its model's server or key failed): nothing to write yet
            return
        self._dirty = True
        if time.monotonic() - self._last_write >= self._cost / COST_SHARE:
            self._write()

    def close(self, results: list, interrupted: bool) -> None:
        self.data.update(finished_at=now(), state="interrupted" if interrupted else "finished",
                         table=closing_table(results) if results else None)
        if self.path is not None:
            self._write()

    def _write(self) -> None:
        started = time.monotonic()
        try:
            write_json(self.path, self.data)
        except OSError:  # a full disk: the run folders' writers report it; this file is rewritten at the next cell
            return
        self._last_write, self._cost, self._dirty = time.monotonic(), time.monotonic() - started, False


def closing_table(results: list) -> str:
    """One row per run of the sweep: what it measured, or why it stopped; a control run says which audio it heard
    (its column; '-' for a real run), a swap's figure is the share of answers that followed the swapped clips, and an
    adaptive run's its threshold, never an accuracy."""
    rows = [("model", "run", "control", "seed", "accuracy", "n", "errors", "folder")]
    for r in results:
        spec = r.spec
        if r.error:
            rows.append((spec.model, spec.cell, spec.control or "-", str(spec.seed), "FAILED", "-", "-", r.error[:60]))
            continue
        accuracy, n = r.benchmark.headline(r.metrics)
        shown = r.benchmark.headline_text(r.metrics) or (
            "n/a" if accuracy is None else f"{'followed ' if spec.control == 'swap' else ''}{accuracy:.3f}")
        rows.append((spec.model, spec.cell, spec.control or "-", str(spec.seed), shown, str(n),
                     str(r.benchmark.headline_errors(r.metrics)), str(r.run_dir)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    failed = sum(1 for r in results if r.error)
    lines = [f"Sweep: {len(results)} runs, {len(results) - failed} finished, {failed} failed"]
    lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)
