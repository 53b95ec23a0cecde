"""How AudioICL's runs are shown: its leaderboard and report modules, handed to the Benchmark seam, and the answer
browser's facts."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from acousticbench.benchmarks.audioicl import leaderboard
from acousticbench.benchmarks.audioicl.record import EpisodeRecord, line_outcome
from acousticbench.core.identity import Identity, harness_identity, identity_of
from acousticbench.benchmarks.base import BenchmarkBase
from acousticbench.benchmarks.entry import AnswerFacts, ClipFacts


class AudioICLViews(BenchmarkBase):
    leaderboard = leaderboard

    def n_records(self, config: dict[str, Any]) -> int:
        return config.get("n_episodes", 0)

    def variant_label(self, variant: int | None) -> str | None:
        return None if variant is None else f"k={variant}"

    def report_module(self) -> ModuleType:
        from acousticbench.benchmarks.audioicl import report

        return report

    def outcome(self, line: Mapping[str, Any]) -> bool | None:
        return line_outcome(line)

    def identity(self, config: dict[str, Any]) -> Identity:
        """The harness's part, then how the episodes were asked and scored: the prompt style, the scoring (strict or
        lenient, as rejudge.py last set it), padded clips, a Morse letter bank."""
        spec = config.get("spec") or {}
        return identity_of({**harness_identity(config), "prompt": spec.get("prompt_style"),
                            "scoring": spec.get("scoring"), "padded": "yes" if spec.get("pad") else None,
                            "letter bank": spec.get("morse_alphabet"),
                            "demo order": spec.get("demo_order") if spec.get("demo_order") != "file" else None})

    def variants(self, config: dict[str, Any]) -> Identity:
        """The settings off their defaults that ask or score episodes otherwise than the plain run (its identity's
        words): a demo order, a prompt style, a scoring, padded clips."""
        from acousticbench.benchmarks.audioicl.spec import ICLOptions

        spec, plain = config.get("spec") or {}, ICLOptions.model_fields
        named = {"demo order": "demo_order", "prompt": "prompt_style", "scoring": "scoring", "padded": "pad"}
        return tuple((what, "yes" if field == "pad" else str(spec[field])) for what, field in named.items()
                     if spec.get(field) not in (None, plain[field].default))

    def recorded_settings(self, config: dict[str, Any]) -> dict[str, Any]:
        """The settings() an earlier run recorded (runs written before `settings`: its 'audioicl' section), and the
        episodes it asked (the meta file's sha256) and the pack's manifest: --resume never mixes two versions of a
        pack in one run."""
        section = config.get("audioicl") or {}
        pack = {"episodes_sha256": section.get("meta_sha256"), "pack_manifest_sha256": section.get("pack_manifest_sha256")}
        return {**(config.get("settings") or section or config.get("spec", {})),
                **{k: v for k, v in pack.items() if v}}

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
