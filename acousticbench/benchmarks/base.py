"""BenchmarkBase: what a benchmark shows in the leaderboard and the report when it says nothing of its own: a model x
task table of its headline accuracy, mean ± std over seeds. AcousticBench and AudioICL override every part."""
from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from acousticbench.benchmarks.entry import AnswerFacts, ClipFacts, Entry, ModelOrder, Section
from acousticbench.benchmarks.option import Option
from acousticbench.core.identity import Identity, harness_identity, identity_of
from acousticbench.core.records import Frozen, RecordBase
from acousticbench.core.tables import html_table, md_table, mean_std, pct


class PlainMetrics(Frozen):
    """metrics.json of a benchmark that says nothing of its own: accuracy over every record, where a failed, refused
    or unreadable answer counts as not correct (never credited), and how many records had each status."""

    benchmark: str
    model: str
    task: str
    seed: int
    n: int  # records: items of the run
    correct: int
    accuracy: float | None
    statuses: dict[str, int]
    tokens: dict[str, int] = {}
    price_usd: float | None = None
    price_basis: str | None = None


class BenchmarkBase:
    """Defaults for the Benchmark protocol's view methods; a benchmark inherits them and overrides what it knows.
    They use its core parts (name, metrics_type, headline) and config.json's spec, and nothing else."""

    name: str
    label_field: str
    item_noun = "items"
    # A benchmark's own leaderboard module (entry, reference_entry, markdown, csv_rows), which the view methods below
    # hand over to; None: they draw the plain model x task table themselves.
    leaderboard: ModuleType | None = None

    def report_module(self) -> ModuleType | None:
        """A benchmark's own report module (sections(entries, order, records)), imported only when a report is drawn
        (numpy and the fits); None: the plain table."""
        return None

    metrics_type: type[BaseModel] = PlainMetrics

    def metrics(self, spec: Any, records: Sequence[Any]) -> Any:
        """PlainMetrics from each record's `correct` field (True counts; False, None and every failure do not)."""
        correct = sum(1 for r in records if r.correct is True)
        return PlainMetrics(benchmark=self.name, model=spec.model, task=spec.task, seed=spec.seed, n=len(records),
                            correct=correct, accuracy=correct / len(records) if records else None,
                            statuses=dict(Counter(r.status for r in records)))

    def headline(self, metrics: Any) -> tuple[float | None, int]:
        return metrics.accuracy, metrics.n

    def summary_line(self, result: Any) -> str:
        acc = "n/a" if result.metrics.accuracy is None else f"{result.metrics.accuracy:.3f}"
        return f"{result.spec.label()}: accuracy {acc} over {result.metrics.n} {self.item_noun} -> {result.run_dir}"

    # the run path's defaults: no grader to share, nothing slow to import, every record scored
    def grader(self, specs: list) -> None:
        return None

    def warm_up(self) -> None:
        return None

    def scored(self, record: RecordBase) -> bool:
        return True

    def headline_errors(self, metrics: Any) -> int:
        """The failed items (status error) among the n of `headline`, so that a count beside n counts that n."""
        return metrics.statuses.get("error", 0)

    def headline_stderr(self, metrics: Any) -> float | None:
        """The standard error of the headline accuracy: metrics.json's top-level `acc_stderr`, where it has one."""
        return getattr(metrics, "acc_stderr", None)

    def reference_keys(self) -> tuple[str, ...]:
        """What a reference run keeps of each record."""
        return ("id", "benchmark", "task", "model", "seed", "response", self.label_field, "correct", "status")

    def listener_note(self, spec: Any, channels: int | None) -> dict[str, Any]:
        """metrics.json fields saying what a model that hears `channels` channels could not hear of the run; none."""
        return {}

    # no options of its own on rejudge.py and rerun_nones.py
    relabel_options: tuple[Option, ...] = ()
    rerun_options: tuple[Option, ...] = ()

    def relabeller(self, options: dict[str, Any]):
        from acousticbench.core.errors import UserError

        raise UserError(f"rejudge.py cannot label {self.name} answers again: its benchmark has no relabeller.")

    def outcome(self, line: Mapping[str, Any]) -> bool | None:
        """A record as JSON (a responses.jsonl line, or a reference's copy of it): every record scored, correct where
        its `correct` is true."""
        return bool(line.get("correct"))

    def identity(self, config: dict[str, Any]) -> Identity:
        """What its runs of one model must share to be averaged: the harness's part only (API model, served model)."""
        return identity_of(harness_identity(config))

    def swapped(self, item: Any, sent: Any) -> Any:
        """The item as --control swap asks it (its key the one of the clips as sent); a benchmark that cannot say
        refuses the control."""
        from acousticbench.core.errors import UserError

        raise UserError(f"--control swap needs to know what the swapped clips ask, and {self.name} cannot say: drop "
                        "swap for its tasks.")

    def variants(self, config: dict[str, Any]) -> Identity:
        """Its settings off their defaults that make a run another thing than the plain run; none."""
        return ()

    def recorded_settings(self, config: dict[str, Any]) -> dict[str, Any]:
        """The settings() an earlier run's config.json recorded, which --resume compares (older runs: the spec)."""
        return config.get("settings") or config.get("spec", {})

    def n_records(self, config: dict[str, Any]) -> int:
        """How many records a finished run's responses.jsonl holds, from its config.json (its Prepared.config's
        'n_items'; 0: not known, only a torn last line is caught)."""
        return config.get("n_items", 0)

    def entry(self, run_dir: Path, config: dict[str, Any], metrics: BaseModel) -> Entry:
        """A finished run's Entry, read through its typed spec (model, task, seed, max_samples) and metrics."""
        if self.leaderboard is not None:
            return self.leaderboard.entry(run_dir, config, metrics)
        spec = config["spec"]
        accuracy, n = self.headline(metrics)
        return Entry(benchmark=self.name, model=spec["model"], task=spec["task"], split="all", manifest="",
                     seed=spec["seed"], max_samples=spec.get("max_samples"), n=n, accuracy=accuracy, parse_failure_rate=None, error_rate=None,
                     run_dir=run_dir, config=config, metrics=metrics)

    def reference_entry(self, summary: dict[str, Any], run: dict[str, Any], records: list[dict[str, Any]]) -> Entry:
        """The Entry of one run of a reference folder (its summary.json, the run's line there, the run's records)."""
        if self.leaderboard is not None:
            return self.leaderboard.reference_entry(summary, run, records)
        n = len(records)
        errors = Counter(r["status"] for r in records)["error"]
        return Entry(benchmark=self.name, model=summary["model"], task=summary["task"],
                     split=summary.get("split", "all"), manifest=summary.get("archive_manifest_sha256", ""),
                     seed=run["seed"], max_samples=summary.get("max_samples"), n=n, accuracy=run["accuracy"],
                     parse_failure_rate=None, error_rate=errors / n if n else None)

    def variant_label(self, variant: int | None) -> str | None:
        """How a variant is written beside its task ('k=3'); None for none."""
        return None if variant is None else str(variant)

    def _cells(self, entries: list[Entry], order: ModelOrder) -> tuple[list[str], dict[str, dict[str, tuple]]]:
        """Columns (task and variant) and rows (model, first-N) of (mean, std, seeds, items) over seeds."""
        groups: dict[tuple[str, int, str], list[Entry]] = {}
        for e in entries:
            label = self.variant_label(e.variant)
            groups.setdefault((e.model, e.max_samples or 0, e.task + (f" {label}" if label else "")), []).append(e)
        columns = sorted({column for _, _, column in groups})
        rows: dict[str, dict[str, tuple]] = {}
        for (model, max_samples, column), group in sorted(groups.items(), key=lambda item: (order(item[0][0]), item[0])):
            accs = [e.accuracy for e in group if e.accuracy is not None]
            cells = rows.setdefault(model + (f" [first {max_samples}]" if max_samples else ""), {})
            cells[column] = (*mean_std(accs), len({e.seed for e in group}), sum(e.n for e in group)) if accs else None
        return columns, rows

    def leaderboard_markdown(self, entries: list[Entry], order: ModelOrder) -> str:
        if self.leaderboard is not None:
            return self.leaderboard.markdown(entries, order)
        columns, rows = self._cells(entries, order)
        return md_table(["Model", *columns], [[model, *(f"{pct(c[0])} ± {pct(c[1])}" if (c := cells.get(t)) else "-"
                                                         for t in columns)] for model, cells in rows.items()])

    def leaderboard_csv(self, entries: list[Entry], order: ModelOrder) -> list[list[str | int]]:
        """benchmark, model, split, task, variant, mean, std, seeds, items: a line per cell with a number."""
        if self.leaderboard is not None:
            return self.leaderboard.csv_rows(entries, order)
        columns, rows = self._cells(entries, order)
        return [[self.name, model, "all", column, "", f"{c[0]:.6f}", f"{c[1]:.6f}", c[2], c[3]]
                for model, cells in rows.items() for column in columns if (c := cells.get(column))]

    def report_sections(self, entries: list[Entry], records: Mapping[Path, Sequence[RecordBase]],
                        order: ModelOrder) -> list[Section]:
        if (module := self.report_module()) is not None:
            return module.sections(entries, order, records)
        columns, rows = self._cells(entries, order)
        slug = re.sub(r"[^a-z0-9]+", "-", self.name.lower())
        body = [[escape(model), *(f'<span class="num" title="{c[2]} seeds, {c[3]} answers">{pct(c[0])} ± {pct(c[1])}'
                                  "</span>" if (c := cells.get(t)) else "-" for t in columns)]
                for model, cells in rows.items()]
        return [Section(f"s-{slug}", f"{self.name} leaderboard", "Accuracy over scored items, mean ± std over seeds.",
                        html_table(slug, ["Model", *columns], body, "Accuracy % (mean ± std over seeds)"))]

    def answer_facts(self, record: RecordBase) -> AnswerFacts:
        """The fields most records have, where this one has them (a benchmark that knows its records says more)."""
        data = record.model_dump()
        return AnswerFacts(prompt=data.get("prompt") or "", audio=list(data.get("audio") or []),
                           truth=None, correct=data.get("correct"))

    def clip_facts(self, record: RecordBase) -> ClipFacts:
        """Nothing known of the clips: the browser names them 'clip 1', 'clip 2' and offers no A-then-B."""
        return ClipFacts()

    def audio_root(self, config: dict[str, Any], spec: Any, run_dir: Path) -> str:
        """The absolute folder the records' audio paths are relative to: by default where the report is built."""
        return os.path.abspath(".")
