"""How AcousticBench's runs are shown: its leaderboard rows and report sections (the report's modules imported only when
a report is drawn), and the answer browser's facts."""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from acousticbench.benchmarks.acoustic.views import leaderboard
from acousticbench.benchmarks.acoustic.records import Metrics, Record
from acousticbench.benchmarks.entry import AnswerFacts, ClipFacts, Entry, ModelOrder, Section
from acousticbench.benchmarks.views import Views
from acousticbench.core.records import RecordBase


class AcousticViews(Views):
    def entry(self, run_dir: Path, config: dict[str, Any], metrics: Metrics) -> Entry:
        return leaderboard.entry(run_dir, config, metrics)

    def reference_entry(self, summary: dict[str, Any], run: dict[str, Any], records: list[dict[str, Any]]) -> Entry:
        return leaderboard.reference_entry(summary, run, records)

    def leaderboard_markdown(self, entries: list[Entry], order: ModelOrder) -> str:
        return leaderboard.markdown(entries, order)

    def leaderboard_csv(self, entries: list[Entry], order: ModelOrder) -> list[list[str | int]]:
        return leaderboard.csv_rows(entries, order)

    def report_sections(self, entries: list[Entry], records: Mapping[Path, Sequence[RecordBase]],
                        order: ModelOrder) -> list[Section]:
        from acousticbench.benchmarks.acoustic.views import report  # numpy and the fit: only a report needs them

        return report.sections(entries, order, records)

    def answer_facts(self, record: Record) -> AnswerFacts:
        return AnswerFacts(prompt=record.prompt, audio=record.audio, truth=record.answer, correct=record.correct,
                           level=record.meta.get("level"), facets=(("kind", record.kind), ("split", record.split)),
                           method=record.judge.method, by=record.judge.model)

    def clip_facts(self, record: Record) -> ClipFacts:
        """Each clip's physical parameters from the question's meta; two clips play A then B with the merge gap."""
        from acousticbench.benchmarks.acoustic.views.clip_facts import physical_params
        from acousticbench.models.limits import MERGE_GAP_S  # the silence between two clips sent as one

        return ClipFacts(params=physical_params(record.meta), gap_s=MERGE_GAP_S if len(record.audio) == 2 else None)

    def audio_root(self, config: dict[str, Any], spec: Any, run_dir: Path) -> str:
        """The archive's absolute path, as config.json recorded it where the run was made."""
        if config.get("adaptive"):  # its questions are its own, in its folder
            return os.path.abspath(Path(run_dir) / config["adaptive"]["pack"])
        return (config.get("archive") or {}).get("absolute_path") or os.path.abspath(spec.settings.archive)
