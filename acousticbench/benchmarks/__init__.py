"""The Benchmark seam: what a benchmark tells the one run path (acousticbench/evaluate.py) and every tool.

A benchmark says what the items of a run are and how each becomes a Prompt (`prepare`), how an item and what came
back become the record on disk (`record_maker`: the A/B judge for AcousticBench, string scoring for AudioICL), how
records become metrics, which settings identify a run (the spec's `settings()`), and how its runs read in the
leaderboard and the report (an Entry per run, its tables, its Sections; BenchmarkBase has defaults). Everything
else (backend sessions, run folders, resume, writers, the leaderboard and report pages, comparison, rerun/rejudge,
references) is written once and dispatches on the benchmark named in config.json and in every record. A third
benchmark is one module here, its pack builder, and a line in BENCHMARKS."""
from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from acousticbench.benchmarks.base import BenchmarkBase
from acousticbench.benchmarks.entry import CSV_HEADER, AnswerFacts, Entry, ModelOrder, Section
from acousticbench.errors import UserError
from acousticbench.records import Prompt, RecordBase

__all__ = ["BENCHMARKS", "CSV_HEADER", "DEFAULT", "AnswerFacts", "Benchmark", "BenchmarkBase", "Entry", "ModelOrder", "Prepared",
           "Section", "benchmark_of_config", "benchmark_of_line", "get_benchmark"]

# name (as config.json and every record write it) -> module holding BENCHMARK; imported when first used
BENCHMARKS = {"AcousticBench": "acousticbench.benchmarks.acoustic.benchmark", "AudioICL": "acousticbench.benchmarks.audioicl.benchmark"}
DEFAULT = "AcousticBench"  # runs written before records named their benchmark


@dataclass(frozen=True)
class Prepared:
    """A run ready to send: its items with their prompts, checked before any backend starts."""

    items: list[tuple[Any, Prompt]]
    notes: tuple[str, ...] = ()  # what the harness changed about every input (padded clips), on each record
    config: dict[str, Any] = field(default_factory=dict)  # the benchmark's part of config.json


class Benchmark(Protocol):
    name: str
    record_type: type  # the pydantic model of a responses.jsonl line (a records.RecordBase)
    final_statuses: frozenset[str]  # kept by --resume; the rest are asked again
    label_field: str  # what reference comparison and compare_runs match on: "chosen" or "prediction"
    uses_judge: bool  # whether its records need the A/B judge

    def prepare(self, spec: Any, cache: dict) -> Prepared: ...

    def record_maker(self, spec: Any, prepared: Prepared, judge: Any) -> Callable[[Any, Prompt, Any], Awaitable[Any]]: ...

    def metrics(self, spec: Any, records: list) -> Any: ...

    def summary_line(self, result: Any) -> str: ...

    def headline(self, metrics: Any) -> tuple[float | None, int]: ...

    def scored(self, record: Any) -> bool: ...

    def spec_from_config(self, config: dict, **overrides: Any) -> Any: ...

    def reference_keys(self) -> tuple[str, ...]: ...

    # what the leaderboard and the report read (BenchmarkBase has a plain default for each)
    metrics_type: type[BaseModel]  # the pydantic model of metrics.json

    def n_records(self, config: dict[str, Any]) -> int: ...

    def entry(self, run_dir: Path, config: dict[str, Any], metrics: dict[str, Any]) -> Entry: ...

    def reference_entry(self, summary: dict[str, Any], run: dict[str, Any], records: list[dict[str, Any]]) -> Entry: ...

    def variant_label(self, variant: int | None) -> str | None: ...

    def leaderboard_markdown(self, entries: list[Entry], order: ModelOrder) -> str: ...

    def leaderboard_csv(self, entries: list[Entry], order: ModelOrder) -> list[list[str | int]]: ...

    def report_sections(self, entries: list[Entry], records: Mapping[Path, Sequence[RecordBase]],
                        order: ModelOrder) -> list[Section]: ...

    def answer_facts(self, record: RecordBase) -> AnswerFacts: ...

    def audio_root(self, config: dict[str, Any], spec: Any, run_dir: Path) -> str: ...


def get_benchmark(name: str | None) -> Benchmark:
    name = name or DEFAULT
    if name not in BENCHMARKS:
        raise UserError(f"unknown benchmark {name!r} (known: {', '.join(BENCHMARKS)}): was this run written by a newer "
                        "harness? Update acousticbench.")
    return importlib.import_module(BENCHMARKS[name]).BENCHMARK


def benchmark_of_config(config: dict) -> Benchmark:
    """The benchmark a run folder's config.json names (runs written before it did are AcousticBench's)."""
    return get_benchmark(config.get("benchmark") or config.get("spec", {}).get("benchmark"))


def benchmark_of_line(data: dict) -> Benchmark:
    """The benchmark of one record read as a dict (older AudioICL records name it only through `shots`)."""
    return get_benchmark(data.get("benchmark") or ("AudioICL" if "shots" in data else None))
