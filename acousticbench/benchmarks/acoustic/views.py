"""How AcousticBench's runs are shown: its leaderboard and report modules, handed to the Benchmark seam, and the answer
browser's facts."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from acousticbench.benchmarks.acoustic import leaderboard
from acousticbench.benchmarks.base import BenchmarkBase
from acousticbench.benchmarks.entry import AnswerFacts, ClipFacts
from acousticbench.benchmarks.acoustic.records import Record, line_outcome
from acousticbench.benchmarks.acoustic.relabel import REJUDGED
from acousticbench.core.identity import Identity, harness_identity, identity_of


class AcousticViews(BenchmarkBase):
    leaderboard = leaderboard

    def n_records(self, config: dict[str, Any]) -> int:
        return config.get("n_questions", 0)

    def report_module(self) -> ModuleType:
        from acousticbench.benchmarks.acoustic import report  # numpy and the fit: only a report needs them

        return report

    def outcome(self, line: Mapping[str, Any]) -> bool | None:
        return line_outcome(line)

    def identity(self, config: dict[str, Any]) -> Identity:
        """How the answers were judged (mode; the model where the LLM judged, the rules' version where they did; the
        judge models rejudge.py read null answers with since, and another judge a rerun was told to use), then the
        harness's part."""
        judge = config.get("judge") or {}
        mode = judge.get("mode")
        history = config.get("history") or []
        again = [h["what"].removeprefix(REJUDGED) for h in history
                 if str(h.get("what", "")).startswith(REJUDGED)]  # relabel.py's own words for what it did
        again += [f"the {h['settings']['judge']} judge of a rerun" for h in history  # rerun told another judge
                  if isinstance(h.get("settings"), dict) and h["settings"].get("judge")]
        return identity_of({"judge": mode, "judge model": judge.get("model") if mode in ("auto", "llm") else None,
                            "rules": judge.get("rules_version") if mode in ("auto", "rules") else None,
                            "rejudged by": ", ".join(dict.fromkeys(again)),
                            "adaptive": (config.get("adaptive") or {}).get("method"), **harness_identity(config)})

    def recorded_settings(self, config: dict[str, Any]) -> dict[str, Any]:
        """The settings an earlier run recorded, and the pack it ran on (its manifest's sha256, from the `archive`
        section of Prepared.config): --resume never mixes two versions of a pack in one run."""
        pack = (config.get("archive") or {}).get("manifest_sha256")
        return {**super().recorded_settings(config), **({"pack_manifest_sha256": pack} if pack else {})}

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
        if config.get("adaptive"):  # its questions are its own, in its folder
            return os.path.abspath(Path(run_dir) / config["adaptive"]["pack"])
        return (config.get("archive") or {}).get("absolute_path") or os.path.abspath(spec.settings.archive)
