"""How AcousticBench's runs are shown: its leaderboard and report modules, handed to the Benchmark seam, and the answer
browser's facts."""
from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

from acousticbench.benchmarks.acoustic import leaderboard
from acousticbench.benchmarks.base import BenchmarkBase
from acousticbench.benchmarks.entry import AnswerFacts, ClipFacts
from acousticbench.benchmarks.acoustic.records import Record


class AcousticViews(BenchmarkBase):
    leaderboard = leaderboard

    def n_records(self, config: dict[str, Any]) -> int:
        return config.get("n_questions", 0)

    def report_module(self) -> ModuleType:
        from acousticbench.benchmarks.acoustic import report  # numpy and the fit: only a report needs them

        return report

    def answer_facts(self, record: Record) -> AnswerFacts:
        return AnswerFacts(prompt=record.prompt, audio=record.audio, truth=record.answer, correct=record.correct,
                           level=record.meta.get("level"), kind=record.kind, split=record.split,
                           method=record.judge.method, by=record.judge.model)

    def clip_facts(self, record: Record) -> ClipFacts:
        """Each clip's physical parameters from the question's meta; two clips play A then B with the merge gap."""
        from acousticbench.benchmarks.acoustic.clip_facts import physical_params
        from acousticbench.models.limits import MERGE_GAP_S  # the silence between two clips sent as one

        return ClipFacts(params=physical_params(record.meta), gap_s=MERGE_GAP_S if len(record.audio) == 2 else None)

    def audio_root(self, config: dict[str, Any], spec: Any, run_dir: Path) -> str:
        """The archive's absolute path, as config.json recorded it where the run was made."""
        return (config.get("archive") or {}).get("absolute_path") or os.path.abspath(spec.settings.archive)
