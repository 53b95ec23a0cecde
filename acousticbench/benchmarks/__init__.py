"""The Benchmark seam: what a benchmark tells the one run path (acousticbench/run/sweep.py), the command line and every
tool, so that none of them names a benchmark.

A benchmark is one package with two modules the seam loads: `face` (FACE, a Face value: its --task names, its options,
its pack; light, read at --help time; face.py) and `benchmark` (BENCHMARK: a BenchmarkBase subclass that writes its run
part, what an item is, how it is asked and how a reply is read, and inherits defaults for the rest: its record, metrics,
identity on the tools, and its views, an object that draws it in the leaderboard and the report; base.py, views.py).
A run's spec (core/settings.py: RunSpec) is the same for every benchmark: the harness's settings, the benchmark's
options, the model, task, variant and seed. Registering one is a line in BENCHMARKS, or register_benchmark() from
outside the harness. Everything else (backend sessions, run folders, resume, writers, leaderboard, comparison,
rerun/rejudge, references, report) is written once and dispatches on the benchmark named in config.json, in every
record and in every Prompt."""
from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from acousticbench.core.errors import UserError

from acousticbench.core.settings import RunSettings, RunSpec, make_spec

if TYPE_CHECKING:
    from pydantic import BaseModel

    from acousticbench.benchmarks.base import BenchmarkBase
    from acousticbench.benchmarks.face import Face, OwnCommand, PackCheck
    from acousticbench.benchmarks.views import Views
    from acousticbench.benchmarks.entry import CSV_HEADER, AnswerFacts, ClipFacts, Entry, ModelOrder, Section  # re-exported
    from acousticbench.benchmarks.option import Option
    from acousticbench.core.identity import Identity
    from acousticbench.core.records import Prompt, RecordBase
    from acousticbench.core.run_identity import RunIdentity

# what the seam re-exports, imported when first asked for (PEP 562)
_LAZY = {"BenchmarkBase": "acousticbench.benchmarks.base", "CSV_HEADER": "acousticbench.benchmarks.entry",
         "AnswerFacts": "acousticbench.benchmarks.entry", "ClipFacts": "acousticbench.benchmarks.entry",
         "Entry": "acousticbench.benchmarks.entry", "Face": "acousticbench.benchmarks.face",
         "PackCheck": "acousticbench.benchmarks.face", "OwnCommand": "acousticbench.benchmarks.face",
         "Views": "acousticbench.benchmarks.views",
         "ModelOrder": "acousticbench.benchmarks.entry", "Section": "acousticbench.benchmarks.entry",
         "Option": "acousticbench.benchmarks.option"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["BENCHMARKS", "CSV_HEADER", "DEFAULT", "AnswerFacts", "ClipFacts", "Benchmark", "BenchmarkBase", "Entry",
           "Face", "Views", "ModelOrder", "Option", "OwnCommand", "PackCheck", "Prepared", "Section", "benchmark_of_config", "benchmark_of_line",
           "claim_tasks", "faces", "get_benchmark", "register_benchmark", "run_identity_of", "spec_from_config"]

# name (as config.json, every record and every Prompt write it) -> its package; in the order runs and tables list them
BENCHMARKS = {"AcousticBench": "acousticbench.benchmarks.acoustic", "AudioICL": "acousticbench.benchmarks.audioicl"}
DEFAULT = "AcousticBench"  # runs written before records named their benchmark

Item = TypeVar("Item")  # a question, an episode: what one request asks (it has an `id`, unique in its run)
Spec = TypeVar("Spec", bound=RunSpec)  # the frozen settings of one run
Rec = TypeVar("Rec", bound="RecordBase")  # one line of responses.jsonl
Met = TypeVar("Met", bound="BaseModel")  # metrics.json (a pydantic model)


@dataclass(frozen=True)
class Prepared(Generic[Item]):
    """A run ready to send: its items with their prompts, checked before any backend starts."""

    items: list[tuple[Item, Prompt]]
    notes: tuple[str, ...] = ()  # what the harness changed about every input (padded clips), on each record
    config: dict[str, Any] = field(default_factory=dict)  # the benchmark's part of config.json
    # items made while the run goes (an adaptive run's tracks): feeds(run_dir, kept records) for the engine,
    # owns(id) for --resume, planned() for the bar and --dry-run, counted(records) for the finished config.json
    source: Any = None


class Grader(Protocol):
    """What a benchmark's runs of one command share to label answers (AcousticBench: the A/B judge), probed before
    the first model call and closed after the last."""

    note: str | None  # why labels may be missing (shown after a run with unlabelled answers)

    async def probe(self) -> None: ...

    async def aclose(self) -> None: ...

    def provenance(self, spec: Any) -> dict[str, Any]: ...  # config.json sections, e.g. {"judge": {...}}


class RunPart(Protocol[Item, Spec, Rec, Met]):
    """What the one run path asks of a benchmark. A new benchmark writes the first four members; BenchmarkBase has
    the rest (an AnswerRecord per reply labelled by read_answer, no grader, PlainMetrics, every record scored)."""

    name: str

    def prepare(self, spec: Spec, cache: dict) -> Prepared[Item]: ...  # its items (each with an `id`), a Prompt each

    def read_answer(self, item: Item, text: str) -> str | None: ...  # the label a reply gives; None: unreadable

    def ideal_observer(self, prompt: Prompt) -> str: ...  # the Oracle's answer to one of its prompts

    item_noun: str  # what its items are called in counts: "questions", "episodes"
    record_type: type[Rec]
    final_statuses: frozenset[str]  # kept by --resume; the rest are asked again
    label_field: str  # what reference comparison and compare_runs match on: "chosen" or "prediction"

    def record_maker(self, spec: Spec, prepared: Prepared[Item],
                     grader: Grader | None) -> Callable[[Item, Prompt, Any], Awaitable[Rec]]: ...

    def grader(self, specs: list[Spec]) -> Grader | None: ...

    def warm_up(self) -> None: ...  # slow imports its metrics need, made in a worker thread while requests are out

    metrics_type: type[Met]  # the pydantic model of metrics.json: the leaderboard validates the file with it, once

    def metrics(self, spec: Spec, records: list[Rec]) -> Met: ...

    def summary_line(self, result: Any) -> str: ...

    def headline(self, metrics: Met) -> tuple[float | None, int]: ...

    def headline_text(self, metrics: Met) -> str | None: ...  # a figure that is no accuracy (a threshold), or None

    def listener_note(self, spec: Spec, channels: int | None) -> dict[str, Any]: ...  # what a listener cannot hear


class ToolPart(Protocol[Rec, Met]):
    """What the tools over finished runs ask (references, paired view, --resume, rerun and rejudge); BenchmarkBase
    has a default for each."""

    def headline_stderr(self, metrics: Met) -> float | None: ...  # the standard error of headline's accuracy

    def headline_errors(self, metrics: Met) -> int: ...  # the failed items among headline's n (the sweep file's)

    def scored(self, record: Rec) -> bool: ...  # also asked of an item before it runs (the plan's power)

    def outcome(self, line: Mapping[str, Any]) -> bool | None: ...  # a record as JSON: correct, wrong, None unscored

    def identity(self, config: dict[str, Any]) -> Identity: ...  # what its runs of one model must share to be averaged

    def variants(self, config: dict[str, Any]) -> Identity: ...  # settings off the plain run's, named in every row

    def swapped(self, item: Item, sent: Prompt) -> Item: ...  # --control swap: the item as sent, its key what it asks

    def recorded_settings(self, config: dict[str, Any]) -> dict[str, Any]: ...  # an earlier run's resume key

    def reference_keys(self) -> tuple[str, ...]: ...

    def reference_line(self, record: dict[str, Any]) -> dict[str, Any]: ...  # a record as a reference keeps it

    def same_item(self, record: Rec, line: Mapping[str, Any]) -> bool: ...  # a reference's line asked the same thing

    def own_items(self, config: dict[str, Any]) -> str | None: ...  # the kind of run whose items pair with no other's

    def compare_own(self, task: str, a: tuple[dict[str, Any], list], b: tuple[dict[str, Any], list]) -> Any: ...

    def relabeller(self, options: dict[str, Any]) -> Any: ...  # rejudge: Relabeller (relabel.py of each package)

    relabel_options: tuple[Option, ...]  # rejudge's flags for its relabeller: `options` holds their values

    rerun_options: tuple[Option, ...]  # rerun's flags: overrides of its spec when its items are asked again

    subset_options: tuple[str, ...]  # its options that choose which of the pack's items a run asks (a reference check
    # compared on other items than the reference's says so)

    def n_records(self, config: dict[str, Any]) -> int: ...


class Benchmark(RunPart[Item, Spec, Rec, Met], ToolPart[Rec, Met], Protocol[Item, Spec, Rec, Met]):
    """A benchmark as the seam sees it: subclass BenchmarkBase and write RunPart's first four members
    (docs/examples/toy_benchmark is one in under 70 lines, its face and registration included)."""

    views: Views  # how its runs read in the leaderboard and the report (views.py; BenchmarkBase: the plain table)


def get_benchmark(name: str | None) -> Benchmark:
    name = name or DEFAULT
    if name not in BENCHMARKS:
        raise UserError(f"unknown benchmark {name!r} (known: {', '.join(BENCHMARKS)}): was this run written by a newer "
                        "harness? Update acousticbench.")
    return importlib.import_module(f"{BENCHMARKS[name]}.benchmark").BENCHMARK


def register_benchmark(name: str, package: str) -> None:
    """Add a benchmark package (with its `face` and `benchmark` modules) under `name`, as config.json and its records
    will name it: every command, tool and the Python API of this process then run and read it."""
    BENCHMARKS[name] = package


def spec_from_config(config: dict, **overrides: Any) -> RunSpec:
    """The RunSpec a run folder's config.json records (overrides replace its fields where given and known)."""
    data = {k: v for k, v in config["spec"].items() if k != "benchmark"}
    bench = benchmark_of_config(config)
    options = faces()[bench.name].options
    known = set(RunSettings.model_fields) | set(options.model_fields) | {"model", "task", "seed", "generation",
                                                                         "control"}
    known |= {options.VARIANT[0]} if options.VARIANT else set()
    data.update({k: v for k, v in overrides.items() if v is not None})
    return make_spec(bench.name, options, **{k: v for k, v in data.items() if k in known})


def faces() -> dict[str, Face]:
    """name -> the benchmark's Face (its module `face`'s FACE), in registration order."""
    return {name: importlib.import_module(f"{package}.face").FACE for name, package in BENCHMARKS.items()}


def claim_tasks(task_spec: str) -> dict[str, list[str]]:
    """--task -> each benchmark's tasks in it (canonical order; a benchmark with none gets []); an empty list or a
    name no benchmark claims is one line suggesting the closest of every benchmark's names."""
    from acousticbench.core.errors import unknown_name

    names = [n.strip() for n in task_spec.split(",") if n.strip()]
    if not names:
        raise UserError(f"--task {task_spec!r} names no task (see `acousticbench tasks`).")
    every = faces()
    for name in names:
        if not any(face.claim_tasks([name]) for face in every.values()):
            raise unknown_name("task", name, [n for face in every.values() for n in face.task_names()])
    return {bench: face.claim_tasks(names) for bench, face in every.items()}


def benchmark_of_config(config: dict) -> Benchmark:
    """The benchmark a run folder's config.json names (runs written before it did are the default benchmark's)."""
    return get_benchmark(config.get("benchmark") or config.get("spec", {}).get("benchmark"))


def run_identity_of(config: dict) -> RunIdentity:
    """What a run folder's config.json says the run is (core/run_identity.py), its benchmark's variants included."""
    from acousticbench.core.run_identity import run_identity

    bench = benchmark_of_config(config)
    named = faces()[bench.name].options.VARIANT  # (its field, its letter): a number of shots
    variant = (config.get("spec") or {}).get(named[0]) if named else None
    return run_identity(config, bench.variants(config), variant, bench.views.variant_label(variant))


def benchmark_of_line(data: dict) -> Benchmark:
    """The benchmark of one record read as a dict (older AudioICL records name it only through `shots`)."""
    return get_benchmark(data.get("benchmark") or ("AudioICL" if "shots" in data else None))
