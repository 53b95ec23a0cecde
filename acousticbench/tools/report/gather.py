"""What the report is made of: the finished runs the leaderboard counts (the latest of each model, task, seed), each
with its config, metrics and records, and the reference run of the same seed where one exists."""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from acousticbench.benchmarks import Entry, benchmark_of_config, spec_from_config
from acousticbench.core.errors import UserError
from acousticbench.tools.leaderboard import collect
from acousticbench.run.results import RESPONSES, read_records


@dataclass(frozen=True)
class Run:
    """One finished run folder, read."""

    entry: Entry
    config: dict[str, Any]
    metrics: BaseModel  # metrics.json as the benchmark's typed model (Benchmark.metrics_type)
    audio_root: str  # absolute folder the records' audio paths are relative to
    # id -> the reference run's line: its label (chosen / prediction) and where it says what it asked, its meta
    reference: dict[str, dict[str, Any]] | None
    reference_file: str | None

    @property
    def benchmark(self) -> str:
        return self.entry.benchmark

    @property
    def records(self) -> list:
        """Its records sorted by id, read from responses.jsonl each time asked and never held: a folder of 228,000
        answers as objects would take gigabytes."""
        bench = benchmark_of_config(self.config)
        return sorted(read_records(self.entry.run_dir / RESPONSES, bench.record_type), key=lambda r: r.id)


class RecordsByRun(Mapping):
    """Run folder -> its records (Run.records), read when asked: what the benchmarks' report sections take."""

    def __init__(self, runs: list[Run]):
        self._runs = {run.entry.run_dir: run for run in runs}

    def __getitem__(self, run_dir: Path) -> list:
        return self._runs[run_dir].records

    def __iter__(self) -> Iterator[Path]:
        return iter(self._runs)

    def __len__(self) -> int:
        return len(self._runs)


def gather(results_dirs: list[Path], references: Path | None) -> list[Run]:
    """Every run the leaderboard would count, in a stable order; a folder that is not a results folder is refused."""
    for folder in results_dirs:
        if not Path(folder).is_dir():
            raise UserError(f"{folder} is not a folder of run folders: pass the results folder (default ./results).")
    if references is not None and not Path(references).is_dir():  # read, or refused: never a report without them
        raise UserError(f"--references {references} is not a folder: pass the reference trajectories' folder, or "
                        "drop --references.")
    entries = sorted(collect([Path(d) for d in results_dirs]),
                     key=lambda e: (e.benchmark, e.model, e.task, e.variant or 0, e.facets, e.seed, str(e.run_dir)))
    return [run for run in (_read(entry, references) for entry in entries) if run is not None]


def _read(entry: Entry, references: Path | None) -> Run | None:
    """The run read; None, with the line naming the file and line on stderr, when a record does not validate (the
    leaderboard leaves such a run out the same way)."""
    import sys

    run_dir, config, metrics = entry.run_dir, entry.config, entry.metrics  # parsed once, by the leaderboard
    bench = benchmark_of_config(config)
    if entry.invalid:  # read once, by the leaderboard's reader (tools/responses_scan.py)
        print(f"skipped: {entry.invalid.rstrip('.')}: the run is left out of the report", file=sys.stderr)
        return None
    spec = spec_from_config(config)
    reference, ref_file = _reference(references, spec, bench.label_field, entry.manifest, bench.made_as(config))
    return Run(entry, config, metrics, bench.views.audio_root(config, spec, run_dir), reference, ref_file)


def _reference(root: Path | None, spec, label: str, pack: str,
               made: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The reference run of the same model, cell and seed, made on the same pack (same ids, same questions) and the
    same way (an adaptive run's procedure: Benchmark.made_as)."""
    from acousticbench.tools.reference import default_root, load_summary
    from acousticbench.core.environment import safe_name

    folder = (root or default_root()) / safe_name(spec.model) / spec.cell
    try:
        summary = load_summary(folder)  # read once: it names the seed's file and the pack
        run = next((r for r in summary["runs"] if r["seed"] == spec.seed), None)
        if run is None or summary.get("archive_manifest_sha256") != pack or summary.get("made_as") != made:
            return None, None  # no run of this seed, another pack or made otherwise: the ids name other questions
        path = folder / run["file"]
        with path.open("rb") as lines:  # streamed, split at b"\n" alone: a JSON line's own U+2028 is no line break
            return {r["id"]: {label: r.get(label), **({"meta": r["meta"]} if "meta" in r else {})}
                    for r in (json.loads(line) for line in lines if line.strip())}, str(path)
    except (UserError, OSError):
        return None, None  # no reference for this model, task or seed: the browser shows none
