"""What the tools read of a finished run, whatever its benchmark: an Entry per run (the leaderboard's unit), the
report's Sections, and the facts about one answer the report's answer browser shows."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

    from acousticbench.core.run_identity import RunIdentity

ModelOrder = Callable[[str], int]  # a model name's place in the registry (as a paper table lists models)
# the leaderboard CSV's columns: what each row of Benchmark.leaderboard_csv holds, in order ("shots": the variant)
# ("note": what the model could not hear in the cell's runs, marks.py; empty for most)
CSV_HEADER = ("benchmark", "model", "split", "task", "shots", "mean_accuracy", "std_accuracy", "n_seeds", "n_items",
              "note")
M = TypeVar("M", bound="BaseModel")  # a benchmark's metrics.json model (Benchmark.metrics_type)


@dataclass(frozen=True)
class Entry(Generic[M]):
    """One finished run of one (model, task, variant, seed), or one run of a reference."""

    benchmark: str
    model: str
    task: str
    manifest: str  # the pack the run read: runs of different packs never share a cell
    seed: int
    max_samples: int | None
    n: int  # the items the accuracy is over
    accuracy: float | None
    parse_failure_rate: float | None  # answers nobody could read a label from (None: not measured)
    error_rate: float | None
    variant: int | None = None  # a setting inside a task that gets its own row or column (a number of shots)
    # the benchmark's own settings that runs must share to meet in a cell, as (name, value) pairs (AcousticBench:
    # ('split', 'eval')); the tools key rows by them and name them, never reading one by its name
    facets: tuple[tuple[str, str], ...] = ()
    run_dir: Path | None = field(default=None, compare=False)  # where it came from (None for references); the report reads it
    config: dict | None = field(default=None, compare=False, repr=False)  # the run's config.json, parsed (None for references)
    metrics: M | None = field(default=None, compare=False, repr=False)  # its metrics.json, validated once (None for references)
    identity: tuple[tuple[str, str], ...] = ()  # what else must match for runs to share a cell (identity.py)
    accuracy_without_errors: float | None = None  # errors (server, judge) left out; the paper's accuracy counts them
    truncation_rate: float | None = None  # replies cut by the token limit (status truncated), never scored
    finished_at: str | None = field(default=None, compare=False)  # config.json's finished_at: which run is latest
    responses: Path | None = field(default=None, compare=False)  # a reference's records (a run's are in run_dir)
    run: RunIdentity | None = field(default=None, compare=False)  # what kind of run (None: a reference, a real run)
    # (id, right) of each scored record in file order, from the results index (tools/results_index.py); None: read
    # responses.jsonl itself
    scores: Callable[[], list[tuple[str, bool]]] | None = field(default=None, compare=False, repr=False)
    # the line naming the first record of responses.jsonl that does not validate (the report leaves the run out)
    invalid: str | None = field(default=None, compare=False, repr=False)
    lines: int | None = field(default=None, compare=False, repr=False)  # responses.jsonl's complete lines, as counted
    # the kind of run whose items are its own ('adaptive psi', Benchmark.own_items: its trials followed its answers),
    # so it never pairs item by item with another run, nor fills an accuracy cell; None: its items are the pack's
    own_items: str | None = None
    figure: str | None = None  # what such a run measured (its threshold; a reference's from its summary.json)
    made_as: str | None = None  # how such a run made its items (Benchmark.made_as): made otherwise, another row

    @property
    def control(self) -> str | None:
        """The audio control it heard in place of the real clips (silence, noise, swap, no-audio), or None."""
        return self.run.control if self.run else None

    @property
    def listener(self) -> str | None:
        """metrics.json's note on what the model could not hear of the run (a mono listener on dir, the canary's
        finding that its audio did not reach the model), or None; every benchmark's metrics have the field."""
        return getattr(self.metrics, "listener", None)  # None for a reference (no metrics)

    @property
    def human(self) -> bool:
        """A person answered the run (the Human model's backend), not a model."""
        return ((self.config or {}).get("backend") or {}).get("backend") == "human"


@dataclass(frozen=True)
class Section:
    """One section of the HTML report; `blurb` and `html` are HTML already, `title` is text."""

    id: str
    title: str
    blurb: str
    html: str


@dataclass(frozen=True)
class AnswerFacts:
    """One record as the answer browser shows it, in the browser's words rather than the benchmark's fields."""

    prompt: str
    audio: list[str]  # clip paths as the record has them (relative to the run's audio root, or absolute)
    truth: str | None  # the correct label; None where no option is correct
    correct: bool | None
    level: int | None = None  # the item's difficulty level, where the benchmark has levels
    # the item's own facets, (name, value) pairs in the benchmark's words (AcousticBench: kind, split), shown beside
    # its level; a benchmark without any gives none
    facets: tuple[tuple[str, str | None], ...] = ()
    method: str = "scorer"  # how the label was read: a scorer, or the judge's method (rules, llm, none)
    by: str | None = None  # the judge model, or the scorer's mode


@dataclass(frozen=True)
class ClipFacts:
    """What the clips of one item are, as the answer browser shows them: the same for every answer to the item, so
    the report asks once per item."""

    captions: tuple[str, ...] = ()  # a caption per clip ("demo 1: 3", "query"); empty: "clip 1", "clip 2"
    # the stimulus's physical parameters: (name with its unit, one value per clip, or one for the whole item)
    params: tuple[tuple[str, tuple[str, ...]], ...] = ()
    gap_s: float | None = None  # silence the harness puts between two clips it sends as one; None: no A-then-B

