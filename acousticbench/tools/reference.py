"""Reference trajectories: compare a run to the published run of the same seed, and promote runs into references."""
from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from acousticbench.core.errors import UserError
from acousticbench.core.readers import read_json, read_jsonl
from acousticbench.core.records import RecordBase
from acousticbench.run.results import CONFIG, RESPONSES, read_config, read_records, write_json
from acousticbench.core.environment import safe_name

SUMMARY = "summary.json"
COMPARISON = "comparison.json"


def default_root() -> Path:
    """./reference_trajectories when run from a checkout, else the one shipped beside the package."""
    here = Path("reference_trajectories")
    return here if here.is_dir() else Path(__file__).resolve().parent.parent / "reference_trajectories"


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
    runs: list[_SummaryRun]
    split: str
    archive_manifest_sha256: str


class _ReferenceLine(BaseModel):
    id: str


_FIX = "restore it (git checkout reference_trajectories/) or promote the runs again with --promote-reference"


def load_summary(folder: Path) -> dict[str, Any]:
    return read_json(folder / SUMMARY, "the reference summary", _FIX, _Summary)


def read_reference(path: Path) -> dict[str, dict]:
    """A reference run's records by id; a damaged or cut line is one line naming it (known before the run starts)."""
    return {r["id"]: r for r in read_jsonl(path, "the reference run", _FIX, _ReferenceLine)}


def reference_file(root: Path, model: str, task: str, seed: int) -> Path:
    """The run file for (model, cell, seed), found through summary.json; the error says what exists. The cell is the
    task for AcousticBench, '<Task>/k<k>' for AudioICL."""
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


def _accuracy(records: list[RecordBase | dict]) -> float | None:
    scored = [r for r in records if _get(r, "kind") == "scored"]  # AudioICL records have no kind: all are scored
    return sum(1 for r in scored if _get(r, "correct")) / len(scored) if scored else None


def _get(record: RecordBase | dict, key: str):
    default = "scored" if key == "kind" else None
    return record.get(key, default) if isinstance(record, dict) else getattr(record, key, default)


def compare_to_reference(records: list, path: Path, run_split: str, label: str = "chosen") -> Comparison:
    """Match item by item on `label` (the chosen option; an AudioICL episode's prediction), over the items the run
    covered."""
    reference = read_reference(path)
    shared = [r for r in records if r.id in reference]
    ref_splits = {r.get("split", "all") for r in reference.values()}
    note = None
    if len(shared) < len(records):
        note = f"{len(records) - len(shared)} questions of the run are not in the reference; compared the {len(shared)} shared"
    elif run_split != "all" and ref_splits != {run_split}:
        note = f"the run covers split {run_split}, the reference {', '.join(sorted(ref_splits))}: compared the shared questions"
    mismatches = [{"id": r.id, "reference": reference[r.id].get(label), "run": getattr(r, label)}
                  for r in shared if getattr(r, label) != reference[r.id].get(label)]
    return Comparison(path, len(shared), len(shared) - len(mismatches), mismatches, _accuracy(shared),
                      _accuracy([reference[r.id] for r in shared]), note)


def write_comparison(run_dir: Path, comparison: Comparison) -> None:
    write_json(run_dir / COMPARISON, comparison.to_json())


def promote(run_dirs: list[Path], root: Path) -> list[Path]:
    """Copy finished runs of either benchmark into references (run_<i>.jsonl by seed, keeping existing seed->file),
    rewrite summary.json."""
    from acousticbench.benchmarks import benchmark_of_config, spec_from_config

    written = []
    for run_dir, config in sorted(((d, _finished_config(d)) for d in run_dirs), key=lambda dc: dc[1]["spec"]["seed"]):
        bench = benchmark_of_config(config)
        spec = spec_from_config(config)
        records = read_records(run_dir / RESPONSES, bench.record_type)
        folder = root / safe_name(spec.model) / spec.cell
        folder.mkdir(parents=True, exist_ok=True)
        summary = load_summary(folder) if (folder / SUMMARY).is_file() else {"runs": []}
        _check_same_setting(summary, config, folder)
        runs = {r["seed"]: r for r in summary["runs"]}
        name = runs[spec.seed]["file"] if spec.seed in runs else f"run_{len(runs) + 1}.jsonl"
        keep = bench.reference_keys()
        slim = [{k: v for k, v in r.model_dump(mode="json").items() if k in keep} for r in sorted(records, key=lambda r: r.id)]
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in slim), encoding="utf-8")
        runs[spec.seed] = {"seed": spec.seed, "file": name, "n": len(records), "accuracy": _accuracy(records)}
        _write_summary(folder, spec, config, list(runs.values()))
        written.append(folder / name)
    return written


def _finished_config(run_dir: Path) -> dict:
    if not (run_dir / CONFIG).is_file() or not (run_dir / "metrics.json").is_file():
        raise UserError(f"{run_dir} is not a finished run (config.json or metrics.json missing): finish it with --resume first.")
    return read_config(run_dir)


def _identity(config: dict) -> tuple:
    """What the runs of one reference must share: split, first-N and the pack (AudioICL: the pack's manifest, which
    pins every clip; the meta file's hash for episodes from elsewhere)."""
    spec = config["spec"]
    icl = config.get("audioicl") or {}
    pack = (config.get("archive") or {}).get("manifest_sha256") or icl.get("pack_manifest_sha256") or icl.get("meta_sha256")
    return spec.get("split", "all"), spec.get("max_samples"), pack or ""


def _check_same_setting(summary: dict, config: dict, folder: Path) -> None:
    """The runs of one reference must cover the same items of the same pack."""
    if not summary["runs"]:
        return
    theirs = (summary["split"], summary.get("max_samples"), summary["archive_manifest_sha256"])
    ours = _identity(config)
    if theirs != ours:
        raise UserError(f"{folder} holds runs with split/max-samples/archive {theirs[0]}/{theirs[1]}/{theirs[2][:8]}, "
                        f"this run has {ours[0]}/{ours[1]}/{ours[2][:8]}: remove {folder} first to replace them.")


def _write_summary(folder: Path, spec, config: dict, runs: list[dict]) -> None:
    runs = sorted(runs, key=lambda r: r["file"])
    accuracies = [r["accuracy"] for r in runs if r["accuracy"] is not None]
    split, max_samples, pack = _identity(config)
    write_json(folder / SUMMARY, {
        "benchmark": spec.benchmark, "model": spec.model, "task": spec.task,
        **spec.reference_fields(),
        "split": split, "max_samples": max_samples,
        "harness_version": config["harness"]["version"],
        "archive_manifest_sha256": pack,
        "runs": runs,
        "mean_accuracy": statistics.fmean(accuracies) if accuracies else None,
        "std_accuracy": statistics.stdev(accuracies) if len(accuracies) > 1 else 0.0 if accuracies else None,
    })
