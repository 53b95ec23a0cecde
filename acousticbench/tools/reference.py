"""Reference trajectories: compare a run to the published run of the same seed, and promote runs into references."""
from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from acousticbench.core.errors import UserError
from acousticbench.core.readers import read_json, read_jsonl
from acousticbench.run.results import (
    CONFIG, METRICS, RESPONSES, RunLock, being_written, read_config, read_records, write_json,
)
from acousticbench.core.environment import safe_name

if TYPE_CHECKING:
    from acousticbench.benchmarks import Benchmark, Entry

SUMMARY = "summary.json"
COMPARISON = "comparison.json"


def default_root() -> Path:
    """./reference_trajectories when run from a checkout, else the one shipped beside the package."""
    here = Path("reference_trajectories")
    return here if here.is_dir() else Path(__file__).resolve().parents[2] / "reference_trajectories"


@dataclass(frozen=True)
class Comparison:
    reference_file: Path
    n: int
    matches: int
    mismatches: list[dict[str, Any]]
    accuracy_run: float | None
    accuracy_reference: float | None
    note: str | None  # e.g. the run and the reference cover different splits

    @property
    def match_rate(self) -> float:
        return self.matches / self.n if self.n else 0.0

    def line(self) -> str:
        return f"Reference comparison: {self.matches}/{self.n} ({100 * self.match_rate:.1f}%) match ({self.reference_file})"

    def to_json(self) -> dict[str, Any]:
        diff = None if self.accuracy_run is None or self.accuracy_reference is None else self.accuracy_run - self.accuracy_reference
        return {"reference_file": str(self.reference_file), "n": self.n, "matches": self.matches,
                "match_rate": self.match_rate, "mismatches": self.mismatches, "accuracy_run": self.accuracy_run,
                "accuracy_reference": self.accuracy_reference, "accuracy_difference": diff, "note": self.note}


class _SummaryRun(BaseModel):
    seed: int
    file: str = Field(pattern=r"^[^/\\]+\.jsonl$")  # a file beside summary.json, never a path elsewhere


class _Summary(BaseModel):
    """What every reference summary holds; its benchmark's facets (a split) are checked where its views read them."""

    runs: list[_SummaryRun]
    archive_manifest_sha256: str


class _ReferenceLine(BaseModel):
    id: str


_FIX = ("restore it (git checkout reference_trajectories/) or promote the runs again with `acousticbench reference "
        "promote`")


def load_summary(folder: Path) -> dict[str, Any]:
    return read_json(folder / SUMMARY, "the reference summary", _FIX, _Summary)


def read_reference(path: Path) -> dict[str, dict]:
    """A reference run's records by id; a damaged or cut line is one line naming it (known before the run starts)."""
    return {r["id"]: r for r in read_jsonl(path, "the reference run", _FIX, _ReferenceLine)}


def reference_file(root: Path, model: str, task: str, seed: int) -> Path:
    """The run file for (model, cell, seed), found through summary.json; the error says what exists. The cell is the
    run spec's `cell`: its task, or its task and variant."""
    folder = root / safe_name(model) / task
    if not folder.is_dir():
        models = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        tasks = sorted(p.name for p in (root / safe_name(model)).iterdir()) if (root / safe_name(model)).is_dir() else []
        if tasks:
            raise UserError(f"no reference for {model} on {task}: {root / safe_name(model)} has tasks {', '.join(tasks)}.")
        raise UserError(f"no reference trajectories for {model} under {root}: references exist for "
                        f"{', '.join(models) or 'no model'}.")
    runs = load_summary(folder)["runs"]
    for run in runs:
        if run["seed"] == seed:
            read_reference(folder / run["file"])  # a damaged reference is found now, not after the run was paid for
            return folder / run["file"]
    raise UserError(f"no reference for {model} on {task} with seed {seed}: references exist for seeds "
                    f"{', '.join(str(r['seed']) for r in runs)}.")


def _accuracy(lines: list[dict[str, Any]], bench: Benchmark) -> float | None:
    """Correct over scored, as the benchmark says of each record (Benchmark.outcome)."""
    scored = [correct for correct in map(bench.outcome, lines) if correct is not None]
    return sum(scored) / len(scored) if scored else None


def other_items(bench: Benchmark, run_spec: Mapping[str, Any], summary: Mapping[str, Any]) -> str | None:
    """How the run chose other items than the reference ('split eval, the reference all'), where it chose some (an
    option off its default); None where it chose the same, or all."""
    from acousticbench.benchmarks import faces

    fields = faces()[bench.name].options.model_fields
    for option in bench.subset_options:
        default = fields[option].default
        run, ref = run_spec.get(option, default), summary.get(option, default)
        if run != default and ref != run:
            return f"{option} {run}, the reference {ref}"
    return None


def compare_to_reference(records: list, path: Path, run_spec: Mapping[str, Any] | None = None,
                         label: str | None = None) -> Comparison:
    """Match item by item on `label` (default: the benchmark's label field, Benchmark.label_field), over the items
    the run covered; the records name their benchmark. `run_spec` (config.json's spec): where the run chose other
    items than the reference (Benchmark.subset_options), the comparison says so."""
    from acousticbench.benchmarks import get_benchmark

    reference = read_reference(path)
    if not records:
        return Comparison(path, 0, 0, [], None, None, None)
    bench = get_benchmark(records[0].benchmark)
    label = label or bench.label_field
    shared = [r for r in records if r.id in reference]
    note = None
    if len(shared) < len(records):
        note = (f"{len(records) - len(shared)} {bench.item_noun} of the run are not in the reference; compared the "
                f"{len(shared)} shared")
    elif other := other_items(bench, run_spec or {}, load_summary(path.parent)):
        note = f"the run covers {other}: compared the shared {bench.item_noun}"
    mismatches = [{"id": r.id, "reference": reference[r.id].get(label), "run": getattr(r, label)}
                  for r in shared if getattr(r, label) != reference[r.id].get(label)]
    return Comparison(path, len(shared), len(shared) - len(mismatches), mismatches,
                      _accuracy([r.model_dump(mode="json") for r in shared], bench),
                      _accuracy([reference[r.id] for r in shared], bench), note)


def write_comparison(run_dir: Path, comparison: Comparison, serving: list[str] | None = None) -> None:
    write_json(run_dir / COMPARISON, {**comparison.to_json(), **({"serving_differences": serving} if serving else {})})


def serving_differences(run_dir: Path, reference_file: Path) -> list[str]:
    """Each fact in which the run's serving manifest differs from the reference's (summary.json keeps it from the
    run promoted last); [] where the reference predates manifests."""
    from acousticbench.core.manifest import differences, manifest_of

    theirs = load_summary(reference_file.parent).get("manifest")
    return differences(theirs, manifest_of(read_config(run_dir))) if theirs else []


def promote(run_dirs: list[Path], root: Path) -> list[Path]:
    """Copy finished runs of either benchmark into references (run_<i>.jsonl by seed, keeping existing seed->file),
    rewrite summary.json."""
    from acousticbench.benchmarks import benchmark_of_config, spec_from_config

    written = []
    given = sorted(((d, _finished_config(d)) for d in run_dirs), key=lambda dc: dc[1]["spec"]["seed"])
    for run_dir, config in given:  # every run checked before anything is written
        _check_a_real_run(run_dir, config)
    _one_run_per_seed(given)
    for run_dir, config in given:
        bench = benchmark_of_config(config)
        spec = spec_from_config(config)
        records = [r.model_dump(mode="json") for r in read_records(run_dir / RESPONSES, bench.record_type)]
        folder = root / safe_name(spec.model) / spec.cell
        folder.mkdir(parents=True, exist_ok=True)
        with _promoting(folder):  # summary.json is read, changed and written: two promotes at once would lose one
            summary = load_summary(folder) if (folder / SUMMARY).is_file() else {"runs": []}
            identity = _identity(bench, run_dir, config)
            _check_same_setting(summary, identity, folder)
            runs = {r["seed"]: r for r in summary["runs"]}
            name = runs[spec.seed]["file"] if spec.seed in runs else f"run_{len(runs) + 1}.jsonl"
            keep = bench.reference_keys()
            slim = [{k: v for k, v in r.items() if k in keep} for r in sorted(records, key=lambda r: r["id"])]
            (folder / name).write_text("".join(json.dumps(r, allow_nan=False) + "\n" for r in slim), encoding="utf-8")
            runs[spec.seed] = {"seed": spec.seed, "file": name, "n": len(records), "accuracy": _accuracy(records, bench)}
            _write_summary(folder, spec, config, identity, list(runs.values()))
        written.append(folder / name)
    return written


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


def _identity(bench: Benchmark, run_dir: Path, config: dict) -> Setting:
    """What the runs of one reference must share: the benchmark's facets (a split), first-N and the pack, as the run's
    Entry says them."""
    entry: Entry = bench.views.entry(run_dir, config, bench.metrics_type.model_validate_json((run_dir / METRICS).read_bytes()))
    return entry.facets, entry.max_samples, entry.manifest


def _check_same_setting(summary: dict, ours: Setting, folder: Path) -> None:
    """The runs of one reference must cover the same items of the same pack."""
    if not summary["runs"]:
        return
    facets = tuple((name, summary.get(name)) for name, _ in ours[0])  # the summary holds each facet by its name
    theirs = (facets, summary.get("max_samples"), summary["archive_manifest_sha256"])
    if theirs != ours:
        def said(setting: Setting) -> str:
            return "/".join([*(str(value) for _, value in setting[0]), str(setting[1]), setting[2][:8]])

        what = "/".join([*(name for name, _ in ours[0]), "max-samples", "archive"])
        raise UserError(f"{folder} holds runs with {what} {said(theirs)}, this run has {said(ours)}: remove {folder} "
                        "first to replace them.")


def _write_summary(folder: Path, spec, config: dict, identity: Setting, runs: list[dict]) -> None:
    from acousticbench.core.manifest import manifest_of

    runs = sorted(runs, key=lambda r: r["file"])
    accuracies = [r["accuracy"] for r in runs if r["accuracy"] is not None]
    facets, max_samples, pack = identity
    write_json(folder / SUMMARY, {
        "benchmark": spec.benchmark, "model": spec.model, "task": spec.task,
        **spec.reference_fields(),
        **dict(facets), "max_samples": max_samples,
        "harness_version": config["harness"]["version"],
        "archive_manifest_sha256": pack,
        "manifest": manifest_of(config),  # how the latest promoted run was served: --compare-reference names drift
        "runs": runs,
        "mean_accuracy": statistics.fmean(accuracies) if accuracies else None,
        "std_accuracy": statistics.stdev(accuracies) if len(accuracies) > 1 else 0.0 if accuracies else None,
    })
