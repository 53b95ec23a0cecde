"""How AudioICL's runs are shown: its leaderboard rows (k beside each task) and report sections, and the answer
browser's facts."""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from acousticbench.benchmarks.audioicl import leaderboard
from acousticbench.benchmarks.audioicl.record import EpisodeRecord, ICLMetrics
from acousticbench.benchmarks.entry import AnswerFacts, ClipFacts, Entry, ModelOrder, Section
from acousticbench.benchmarks.views import Views
from acousticbench.core.records import RecordBase


class AudioICLViews(Views):
    def entry(self, run_dir: Path, config: dict[str, Any], metrics: ICLMetrics) -> Entry:
        return leaderboard.entry(run_dir, config, metrics)

    def reference_entry(self, summary: dict[str, Any], run: dict[str, Any], records: list[dict[str, Any]]) -> Entry:
        return leaderboard.reference_entry(summary, run, records)

    def variant_label(self, variant: int | None) -> str | None:
        return None if variant is None else f"k={variant}"

    def leaderboard_markdown(self, entries: list[Entry], order: ModelOrder) -> str:
        return leaderboard.markdown(entries, order)

    def leaderboard_csv(self, entries: list[Entry], order: ModelOrder) -> list[list[str | int]]:
        return leaderboard.csv_rows(entries, order)

    def report_sections(self, entries: list[Entry], records: Mapping[Path, Sequence[RecordBase]],
                        order: ModelOrder) -> list[Section]:
        from acousticbench.benchmarks.audioicl import report

        return report.sections(entries, order, records)

    def answer_facts(self, record: EpisodeRecord) -> AnswerFacts:
        return AnswerFacts(prompt=record.prompt, audio=record.audio, truth=record.gt, correct=record.correct,
                           by=record.scoring)

    def clip_facts(self, record: EpisodeRecord) -> ClipFacts:
        """Each clip named by its line of the prompt: 'demo 1: <label>', ..., 'query'."""
        from acousticbench.benchmarks.audioicl.prompts import clip_captions

        return ClipFacts(captions=clip_captions(record.prompt, len(record.audio)))

    def audio_root(self, config: dict[str, Any], spec: Any, run_dir: Path) -> str:
        """The episodes' base folder, written relative to where the run was started: tried from here, then beside
        results/."""
        from acousticbench.benchmarks.audioicl.spec import base_of

        base = Path(base_of(spec))
        if base.is_absolute() or base.is_dir():
            return os.path.abspath(base)
        beside = run_dir.parent.parent / base
        return os.path.abspath(beside if beside.is_dir() else base)
