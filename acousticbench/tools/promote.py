"""Promote finished runs into the reference trajectories: each checked (a plain real run at rest, one per seed, the
same setting as the runs already there) before anything is written, then copied slim under the reference folder's
lock, and its summary.json written again."""
from __future__ import annotations

import json
import statistics
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acousticbench.core.environment import safe_name
from acousticbench.core.errors import UserError
from acousticbench.run.results import (
    CONFIG, METRICS, RESPONSES, RunLock, being_written, read_config, read_records, write_json,
)
from acousticbench.tools.reference import SUMMARY, accuracy, load_summary

if TYPE_CHECKING:
    from acousticbench.benchmarks import Benchmark, Entry


def promote(run_dirs: list[Path], root: Path) -> list[Path]:
    """Copy finished runs of either benchmark into references (run_<i>.jsonl by seed, keeping existing seed->file),
    rewrite summary.json."""
    from acousticbench.benchmarks import benchmark_of_config, spec_from_config

    written = []
    given = sorted(((d, _finished_config(d)) for d in run_dirs), key=lambda dc: dc[1]["spec"]["seed"])
    for run_dir, config in given:  # every run checked before anything is written
        _check_a_real_run(run_dir, config)
    _one_run_per_seed(given)
    plans = []
    for run_dir, config in given:
        bench, spec = benchmark_of_config(config), spec_from_config(config)
        read_records(run_dir / RESPONSES, bench.record_type)  # a record it cannot read is named first, as when copied
        metrics = bench.metrics_type.model_validate_json((run_dir / METRICS).read_bytes())
        plans.append((run_dir, config, bench, spec, metrics, root / safe_name(spec.model) / spec.cell,
                      (_identity(bench, run_dir, config, metrics), bench.made_as(config))))
    _one_setting_a_folder([(folder, setting) for *_, folder, setting in plans])
    for run_dir, config, bench, spec, metrics, folder, (identity, made) in plans:
        records = [r.model_dump(mode="json") for r in read_records(run_dir / RESPONSES, bench.record_type)]
        folder.mkdir(parents=True, exist_ok=True)
        with _promoting(folder):  # summary.json is read, changed and written: two promotes at once would lose one
            summary = load_summary(folder) if (folder / SUMMARY).is_file() else {"runs": []}
            _check_same_setting(summary, identity, made, folder)  # again: another promote may have written since
            runs = {r["seed"]: r for r in summary["runs"]}
            name = runs[spec.seed]["file"] if spec.seed in runs else f"run_{len(runs) + 1}.jsonl"
            slim = [bench.reference_line(r) for r in sorted(records, key=lambda r: r["id"])]
            (folder / name).write_text("".join(json.dumps(r, allow_nan=False) + "\n" for r in slim), encoding="utf-8")
            runs[spec.seed] = {"seed": spec.seed, "file": name, "n": len(records),
                               **_figure(bench, metrics, records, made)}
            _write_summary(folder, spec, config, identity, list(runs.values()), made)
        written.append(folder / name)
    return written


def _figure(bench: Benchmark, metrics: Any, records: list[dict], made: str | None) -> dict:
    """A run's figure in its reference's summary: its accuracy, or, for a run whose items are its own (no accuracy to
    average), what it measured."""
    if made:
        return {"accuracy": None, "figure": bench.headline_text(metrics)}
    return {"accuracy": accuracy(records, bench)}


def _one_setting_a_folder(plans: list[tuple[Path, tuple]]) -> None:
    """The runs given for one reference folder agree with each other and with the runs it holds, before anything is
    written: a promote refused half-way would leave a reference of some of them."""
    first: dict[Path, tuple] = {}
    for folder, setting in plans:
        if folder not in first:
            first[folder] = setting
            if (folder / SUMMARY).is_file():
                _check_same_setting(load_summary(folder), *setting, folder)
        elif setting != first[folder]:
            raise UserError(f"the runs given for {folder} were not run alike ({_said(*first[folder])} against "
                            f"{_said(*setting)}): promote the runs of one setting into one reference; nothing was "
                            "written.")


def _said(identity: Setting, made: str | None) -> str:
    facets, max_samples, pack = identity
    said = [*(str(value) for _, value in facets), f"first {max_samples}" if max_samples else "all questions",
            pack[:8], made or "the pack's questions"]
    return "/".join(part for part in said if part)


def _check_a_real_run(run_dir: Path, config: dict) -> None:
    """A reference is its model's plain real run: a control (its audio replaced) or a variant would stand for it."""
    from acousticbench.benchmarks import run_identity_of

    run = run_identity_of(config)
    if run.control or run.variants:
        what = (f"a control run ({run.control}: its audio replaced)" if run.control else
                f"a variant ({', '.join(f'{k}: {v}' for k, v in run.variants)})")
        raise UserError(f"{run_dir} is {what} of {run.model} on {run.cell or run.task}, and a reference is the "
                        "model's plain real run: promote the real run instead.")


def _one_run_per_seed(given: list[tuple[Path, dict]]) -> None:
    """A reference keeps one run per seed: two given runs of one model, cell and seed would leave only the later one,
    so neither is kept and the line names both, before anything is written."""
    from acousticbench.benchmarks import spec_from_config

    seen: dict[tuple, Path] = {}
    for run_dir, config in given:
        spec = spec_from_config(config)
        key = (spec.model, spec.cell, spec.seed)
        if key in seen:
            raise UserError(f"{seen[key]} and {run_dir} are both {spec.model} on {spec.cell} with seed {spec.seed}, "
                            "and a reference keeps one run per seed: pass the one to keep; nothing was written.")
        seen[key] = run_dir


@contextmanager
def _promoting(folder: Path):
    """An exclusive flock on the reference folder itself (no lock file among the references), waited for up to
    RunLock.WAIT_S, else one line."""
    import fcntl
    import os
    import time

    fd = os.open(folder, os.O_RDONLY)
    try:
        deadline = time.monotonic() + RunLock.WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise UserError(f"{folder} is being written by another promote: wait for it to finish, then "
                                    "promote again; nothing was written there.") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing drops the lock


def _finished_config(run_dir: Path) -> dict:
    if being_written(run_dir):  # its files may change while they are copied: a reference is made of a run at rest
        raise UserError(f"{run_dir} is being written by another process (a run, --resume, rerun or rejudge): promote "
                        "it once that has finished; nothing was written.")
    if not (run_dir / CONFIG).is_file() or not (run_dir / METRICS).is_file():
        raise UserError(f"{run_dir} is not a finished run (config.json or metrics.json missing): finish it with --resume first.")
    return read_config(run_dir)


Setting = tuple[tuple[tuple[str, str], ...], int | None, str]  # a run's facets, its first N and its pack


def _identity(bench: Benchmark, run_dir: Path, config: dict, metrics: Any) -> Setting:
    """What the runs of one reference must share: the benchmark's facets (a split), first-N and the pack, as the run's
    Entry says them."""
    entry: Entry = bench.views.entry(run_dir, config, metrics)
    return entry.facets, entry.max_samples, entry.manifest


def _check_same_setting(summary: dict, ours: Setting, made: str | None, folder: Path) -> None:
    """The runs of one reference must cover the same items of the same pack, made the same way."""
    if not summary["runs"]:
        return
    if summary.get("made_as") != made:
        raise UserError(f"{folder} holds runs made as {summary.get('made_as') or 'runs of the pack'}, this run as "
                        f"{made or 'a run of the pack'}: remove {folder} first to replace them.")
    facets = tuple((name, summary.get(name)) for name, _ in ours[0])  # the summary holds each facet by its name
    theirs = (facets, summary.get("max_samples"), summary["archive_manifest_sha256"])
    if theirs != ours:
        def said(setting: Setting) -> str:
            return "/".join([*(str(value) for _, value in setting[0]), str(setting[1]), setting[2][:8]])

        what = "/".join([*(name for name, _ in ours[0]), "max-samples", "archive"])
        raise UserError(f"{folder} holds runs with {what} {said(theirs)}, this run has {said(ours)}: remove {folder} "
                        "first to replace them.")


def _write_summary(folder: Path, spec, config: dict, identity: Setting, runs: list[dict], made: str | None) -> None:
    from acousticbench.core.manifest import manifest_of

    runs = sorted(runs, key=lambda r: r["file"])
    accuracies = [r["accuracy"] for r in runs if r["accuracy"] is not None]
    facets, max_samples, pack = identity
    write_json(folder / SUMMARY, {
        "benchmark": spec.benchmark, "model": spec.model, "task": spec.task,
        **spec.reference_fields(), **spec.kind_field(), **({"made_as": made} if made else {}),
        **dict(facets), "max_samples": max_samples,
        "harness_version": config["harness"]["version"],
        "archive_manifest_sha256": pack,
        "manifest": manifest_of(config),  # how the latest promoted run was served: --compare-reference names drift
        "runs": runs,
        "mean_accuracy": statistics.fmean(accuracies) if accuracies else None,
        "std_accuracy": statistics.stdev(accuracies) if len(accuracies) > 1 else 0.0 if accuracies else None,
    })
