"""Views: how a benchmark's runs read in the leaderboard and the report. The defaults draw a model x task table of
the headline accuracy, mean ± std over seeds; a benchmark that shows more subclasses Views and gives its own."""
from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from acousticbench.benchmarks.entry import AnswerFacts, ClipFacts, Entry, ModelOrder, Section
from acousticbench.core.records import RecordBase
from acousticbench.core.tables import html_table, md_table, mean_std, pct


class Views:
    """The views of one benchmark: they read its name and its headline, and config.json's spec."""

    def __init__(self, bench: Any) -> None:
        self.bench = bench  # its BenchmarkBase (not imported: base.py imports this module)

    def entry(self, run_dir: Path, config: dict[str, Any], metrics: BaseModel) -> Entry:
        """A finished run's Entry, read through its typed spec (model, task, seed, max_samples) and metrics."""
        spec = config["spec"]
        accuracy, n = self.bench.headline(metrics)
        return Entry(benchmark=self.bench.name, model=spec["model"], task=spec["task"], manifest="",
                     seed=spec["seed"], max_samples=spec.get("max_samples"), n=n, accuracy=accuracy, parse_failure_rate=None, error_rate=None,
                     run_dir=run_dir, config=config, metrics=metrics)

    def reference_entry(self, summary: dict[str, Any], run: dict[str, Any], records: list[dict[str, Any]]) -> Entry:
        """The Entry of one run of a reference folder (its summary.json, the run's line there, the run's records)."""
        n = len(records)
        errors = Counter(r["status"] for r in records)["error"]
        return Entry(benchmark=self.bench.name, model=summary["model"], task=summary["task"],
                     manifest=summary.get("archive_manifest_sha256", ""),
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
        columns, rows = self._cells(entries, order)
        return md_table(["Model", *columns], [[model, *(f"{pct(c[0])} ± {pct(c[1])}" if (c := cells.get(t)) else "-"
                                                         for t in columns)] for model, cells in rows.items()])

    def leaderboard_csv(self, entries: list[Entry], order: ModelOrder) -> list[list[str | int]]:
        """benchmark, model, split, task, variant, mean, std, seeds, items: a line per cell with a number."""
        columns, rows = self._cells(entries, order)
        return [[self.bench.name, model, "all", column, "", f"{c[0]:.6f}", f"{c[1]:.6f}", c[2], c[3]]
                for model, cells in rows.items() for column in columns if (c := cells.get(column))]

    def report_sections(self, entries: list[Entry], records: Mapping[Path, Sequence[RecordBase]],
                        order: ModelOrder) -> list[Section]:
        columns, rows = self._cells(entries, order)
        slug = re.sub(r"[^a-z0-9]+", "-", self.bench.name.lower())
        body = [[escape(model), *(f'<span class="num" title="{c[2]} seeds, {c[3]} answers">{pct(c[0])} ± {pct(c[1])}'
                                  "</span>" if (c := cells.get(t)) else "-" for t in columns)]
                for model, cells in rows.items()]
        return [Section(f"s-{slug}", f"{self.bench.name} leaderboard", "Accuracy over scored items, mean ± std over seeds.",
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
