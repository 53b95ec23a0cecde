"""A run's folder: where --resume continues (refusing other settings, one process at a time), and config.json."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from acousticbench.core.reporter import warn
from acousticbench.core import provenance
from acousticbench.core.instants import now
from acousticbench.core.manifest import serving_manifest
from acousticbench.benchmarks import Benchmark, Grader, Prepared
from acousticbench.core.errors import UserError, writable_folder
from acousticbench.core.written_by import is_newer, version_line, version_of
from acousticbench.run.resumable import belongs_to, kept_records, unknown_settings
from acousticbench.run.results import (
    CONFIG, RESPONSES, RunLock, latest_run_dir, new_run_dir, read_config, rewrite_sorted, write_json,
)


@dataclass
class Cell:
    """One run of a sweep, from its prepared items to its folder."""

    spec: Any
    bench: Benchmark
    prepared: Prepared
    previous: Path | None = None  # the run --resume continues
    earlier_config: dict = field(default_factory=dict)
    lock: RunLock | None = None
    config: dict = field(default_factory=dict)  # as written to config.json when the run started
    canary: dict | None = None  # the start-of-run canary's verdicts (run/canary.py), where it was asked
    kept: list = field(default_factory=list)  # --resume: the earlier run's records that are kept (run/resumable.py)
    unheard: str | None = None  # the canary's mark on a run it invalidates (metrics.json's listener note)
    canary_error: str | None = None  # what the canary found missing that this run needs: the command exits 1


def resume_target(cell: Cell, backend_name: str) -> None:
    """--resume: the latest run folder of this cell (by its config.json, not its name), refused when it was made with
    other settings or holds what it cannot continue without losing or mixing answers; its records to keep are read."""
    spec = cell.spec
    if not spec.settings.resume:
        return
    previous = latest_run_dir(spec.settings.results_dir, spec.run_prefix(backend_name), belongs_to(spec))
    if previous is None:
        warn(f"note: --resume: no earlier run of {spec.label()} under {spec.settings.results_dir}; starting it.")
        return
    unknown_settings(previous)
    config = read_config(previous, missing_ok=True)
    written = version_line(previous, config)
    if written and is_newer(version_of(config)):  # its records may say what this version cannot: never mixed
        raise UserError(f"--resume: {written}.")
    changed = differences(cell.bench, config, cell.prepared.config, spec)
    if changed:
        fix = ("to start a new run on this pack, or point --archive at the pack it was made with"
               if any(is_pack(k) for k in changed) else "or with the same settings")
        raise UserError(f"--resume: the latest run {previous} used other settings ({described(changed)}); rerun "
                        f"without --resume {fix}.")
    writable_folder(previous, "run folder", "--results-dir (or without --resume)")
    cell.lock = RunLock(previous)  # a second run.py resuming the same folder refuses instead of asking twice
    source = cell.prepared.source  # items made as the run goes (adaptive): it knows its own ids
    cell.kept = kept_records(previous, spec, cell.bench, {item.id for item, _ in cell.prepared.items},
                             source.owns if source is not None else None)
    cell.previous, cell.earlier_config = previous, config


def differences(bench: Benchmark, earlier: dict, prepared: dict, spec: Any) -> dict[str, tuple[Any, Any]]:
    """What an earlier run recorded that this one would record otherwise: its settings and the pack it reads (each
    benchmark's recorded_settings names what identifies its pack, from Prepared.config); a key the earlier run did
    not record (an older harness) is no difference."""
    before = bench.recorded_settings(earlier)
    now = bench.recorded_settings({**prepared, "settings": spec.resume_key()})
    return {k: (before[k], v) for k, v in now.items() if k in before and before[k] != v}


def is_pack(key: str) -> bool:
    return "pack" in key or "sha256" in key


def described(changed: dict[str, tuple[Any, Any]]) -> str:
    return ", ".join(f"{k} {_shown(old)} -> {_shown(new)}" for k, (old, new) in changed.items())


def _shown(value: Any) -> str:
    """A setting's value in the refusal: a sha256 by its first 12 digits (the rest says nothing more to a reader)."""
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return value[:12]
    return repr(value)


def same_served_model(cells: list[Cell], backend) -> None:
    """--resume, once the backend is open: the model its server serves now is the one the earlier answers came from
    (a server restarted with another model would mix two models' answers in one run); nothing is written before."""
    served = backend.provenance().get("served_model_id")
    for cell in cells:
        before = (cell.earlier_config.get("backend") or {}).get("served_model_id")
        if cell.previous is not None and served and before and before != served:
            raise UserError(f"--resume: the latest run {cell.previous} was answered by {before!r}, and the server now "
                            f"serves {served!r}: rerun without --resume to start a new run, or serve {before!r} "
                            "again.")


def command_line() -> str:
    """The command as run, secrets redacted, for config.json."""
    return " ".join(provenance.redacted_argv())


def read_again(cell: Cell, backend, grader: Grader | None) -> dict:
    """config.json's backend and grader sections as they are now: where the answers and the judge's verdicts came
    from may move during a run (a redirect), so they are read again when the run ends or is interrupted."""
    return {"backend": backend.provenance(), **(grader.provenance(cell.spec) if grader is not None else {})}


def _counted(prepared) -> dict[str, Any]:
    """config.json's n_items: the items the run asks; for items made as it goes (an adaptive run's trials), the most
    it may ask until it ends (then _finish counts them)."""
    if prepared.source is None:
        return {"n_items": len(prepared.items)}
    return {"n_items": None, "n_items_at_most": prepared.source.planned()}


def _config(cell: Cell, backend, grader: Grader | None, started: str) -> dict:
    spec, bench = cell.spec, cell.bench
    config = {"benchmark": bench.name, "spec": spec.to_json(), "settings": spec.resume_key(),
              **_counted(cell.prepared),
              "command": command_line(),
              "backend": backend.provenance(), "harness": provenance.harness(), **cell.prepared.config,
              "started_at": cell.earlier_config.get("started_at", started),
              "resumed_at": [*cell.earlier_config.get("resumed_at", []), *([started] if cell.previous else [])],
              "history": cell.earlier_config.get("history", [])}
    if cell.previous and "backend" in cell.earlier_config:  # what each earlier session's backend was (a listener)
        config["earlier_backends"] = [*cell.earlier_config.get("earlier_backends", []), cell.earlier_config["backend"]]
    if cell.canary is not None:
        config["canary"] = cell.canary
    if spec.control:  # the real run it is the control of: the latest of the same cell, written first in a sweep
        real_spec = replace(spec, control=None)
        real = latest_run_dir(spec.settings.results_dir, real_spec.run_prefix(backend.backend_name), belongs_to(real_spec))
        config["control"] = {**config.get("control", {}), "real_run": real.name if real else None}
    if grader is not None:  # how the run's labels were obtained (a judge's settings)
        sections = grader.provenance(spec)
        config.update(sections)
        config["labelled_by"] = sorted(sections)  # the manifest reads them without naming any benchmark's
    return {**config, "manifest": serving_manifest(config)}


def open_run_dir(cell: Cell, backend, grader: Grader | None) -> tuple[Path, list]:
    """The run folder (the resumed one with its finished records, or a new one) with config.json written."""
    spec = cell.spec
    if cell.previous is None:
        run_dir, kept = new_run_dir(spec.settings.results_dir, spec.run_prefix(backend.backend_name)), []
        cell.lock = RunLock(run_dir)
    else:
        run_dir, kept = cell.previous, cell.kept
        rewrite_sorted(run_dir / RESPONSES, kept)  # drops a torn last line and the records that are asked again
    cell.config = _config(cell, backend, grader, now())
    write_json(run_dir / CONFIG, cell.config)
    return run_dir, kept
