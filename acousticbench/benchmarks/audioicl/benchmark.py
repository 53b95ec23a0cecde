"""AudioICL-Bench as a Benchmark: k-shot episodes of meta_k{k}.jsonl, scored by string match into EpisodeRecords."""
from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, get_args

from acousticbench.packs.trust import check_item_audio, checked_sha256
from acousticbench.benchmarks.audioicl.episodes import BUILD_HINT, load_episodes, meta_path
from acousticbench.benchmarks.audioicl.labels import answer_space, demo_labels, task_labels
from acousticbench.benchmarks.audioicl.pack import MANIFEST, clip_format, load_manifest, manifest_sha256, pack_root
from acousticbench.benchmarks.audioicl.padding import PAD_NOTE
from acousticbench.benchmarks.audioicl.order import compliance, order_of, permuted
from acousticbench.benchmarks.audioicl.prompts import build_prompt, load_alphabet, template_sha256
from acousticbench.benchmarks.audioicl.record import (FINAL_STATUSES, EpisodeRecord, ICLMetrics, icl_metrics, line_outcome,
                                                      make_episode_record)
from acousticbench.benchmarks.audioicl.spec import base_of, meta_of
from acousticbench.benchmarks import Prepared
from acousticbench.benchmarks.option import Option
from acousticbench.benchmarks.audioicl.scoring import Scoring
from acousticbench.benchmarks.audioicl.views import AudioICLViews
from acousticbench.benchmarks.base import BenchmarkBase
from acousticbench.core.identity import Identity, harness_identity, identity_of
from acousticbench.core.errors import UserError
from acousticbench.core.records import Prompt
from acousticbench.core.settings import RunSpec
from acousticbench.core.stats import interval_text


def _pinned(spec: RunSpec, cache: dict) -> dict[str, str] | None:
    """path -> sha256 of every file the pack's MANIFEST.json pins, when the run uses a pack of ours (not --icl-meta)."""
    if spec.options.meta_dir is not None or spec.options.base_dir is not None:
        return None
    root = pack_root(spec.settings.archive)
    if ("pinned", root) not in cache:
        cache[("pinned", root)] = load_manifest(root).get("sha256", {}) if (root / MANIFEST).is_file() else None
    return cache[("pinned", root)]


def _with_labels(episode, prompt: Prompt, labels: dict[str, list[str]]) -> Prompt:
    """The prompt with what the chance baselines answer from: the episode's label space and its demos' labels."""
    space = answer_space(episode, labels)
    return prompt.model_copy(update={"answer_space": space, "demo_labels": demo_labels(episode, space)})


class AudioICLBenchmark(BenchmarkBase):
    name = "AudioICL"
    record_type = EpisodeRecord
    final_statuses = FINAL_STATUSES
    metrics_type = ICLMetrics
    label_field = "prediction"
    item_noun = "episodes"

    @cached_property
    def views(self) -> AudioICLViews:
        return AudioICLViews(self)

    def n_records(self, config: dict[str, Any]) -> int:
        return config.get("n_episodes", 0)

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

    def prepare(self, spec: RunSpec, cache: dict) -> Prepared:
        """The task's episodes of meta_k{k}.jsonl (first --max-samples), their audio checked, prompts rendered."""
        key = (str(meta_of(spec)), spec.variant)
        if key not in cache:
            cache[key] = load_episodes(meta_of(spec), spec.variant)
        episodes = [e for e in cache[key] if e.task == spec.task][: spec.settings.max_samples]
        meta = meta_path(meta_of(spec), spec.variant)
        if not episodes:
            raise UserError(f"{meta} has no {spec.task} episodes.")
        pinned = _pinned(spec, cache)
        if ("sha", meta) not in cache:  # hashed (and checked against the pack's manifest) once per command
            expected = pinned.get(f"meta/{meta.name}") if pinned is not None else None
            cache[("sha", meta)] = checked_sha256(meta, expected, "meta file", BUILD_HINT)
        promised = clip_format(load_manifest(pack_root(spec.settings.archive))) if pinned is not None else None
        n_audio = check_item_audio({e.id: e.audio_paths() for e in episodes}, base_of(spec), str(meta), pinned,
                                   BUILD_HINT, promised)
        alphabet = load_alphabet(spec.options.morse_alphabet) if spec.options.morse_alphabet and spec.task == "MorseCode" else None
        pad_dir = spec.settings.results_dir / ".audioicl-padded" if spec.options.pad else None
        if ("labels", key) not in cache:  # the task's labels over every episode of the file, not the first N
            cache[("labels", key)] = task_labels(cache[key])
        if spec.options.demo_order == "permuted":  # this seed's order of each episode's demos (order.py)
            episodes = [permuted(e, spec.seed) for e in episodes]
        items = [(e, _with_labels(e, build_prompt(e, base_of(spec), style=spec.options.prompt_style, seed=spec.seed,
                                                  alphabet=alphabet, pad_dir=pad_dir), cache[("labels", key)]))
                 for e in episodes]
        config = {"audioicl": {**spec.resume_key(), "meta_file": str(meta), "meta_sha256": cache[("sha", meta)],
                               "pack_manifest_sha256": manifest_sha256(pack_root(spec.settings.archive)) if spec.options.meta_dir is None
                               else None},
                  "pack_check": {"passed": True, "meta_file": str(meta), "episodes": len(items), "audio_files": n_audio,
                                 "against": "MANIFEST.json" if pinned is not None else "existence only (no manifest)"},
                  "prompt_template_sha256": template_sha256(spec.options.prompt_style), "n_episodes": len(items)}
        return Prepared(items, (PAD_NOTE,) if spec.options.pad else (), config)

    def warm_up(self) -> None:
        """Nothing slow to import before a run's metrics."""
        return None

    def grader(self, specs: list[RunSpec]) -> None:
        """Episodes are scored by string match: no grader to share."""
        return None

    relabel_options = (Option("--scoring", "score with these rules (default: the scoring each run was made with)",
                              choices=get_args(Scoring)),)

    def relabeller(self, options: dict[str, Any]):
        """rejudge.py: every answered episode scored again (with options["scoring"], or the one it was run with)."""
        from acousticbench.benchmarks.audioicl.relabel import ScoreRelabeller

        return ScoreRelabeller(options)

    def record_maker(self, spec: RunSpec, prepared: Prepared, grader):
        async def to_record(episode, prompt, outcome) -> EpisodeRecord:
            record = make_episode_record(episode, prompt, spec.model, outcome, shots=spec.variant,
                                         scoring=spec.options.scoring, base=base_of(spec), notes=prepared.notes)
            if spec.options.demo_order == "permuted":
                record = record.model_copy(update={"demo_order": order_of(episode.id, spec.variant, spec.seed)})
            return record

        return to_record

    def ideal_observer(self, prompt: Prompt) -> str:
        """The Oracle's answer: the rule induced from the prompt's demos and applied to the query (oracle.py)."""
        from acousticbench.benchmarks.audioicl.oracle import solve

        return solve(prompt)

    def metrics(self, spec: RunSpec, records: list[EpisodeRecord]) -> ICLMetrics:
        metrics = icl_metrics(records, model=spec.model, task=spec.task, shots=spec.variant, seed=spec.seed,
                              prompt_style=spec.options.prompt_style, scoring=spec.options.scoring)
        well_formed, answered = compliance(records)
        return metrics.model_copy(update={"demo_order": spec.options.demo_order, "format_compliance": well_formed,
                                          "format_compliance_n": answered})

    def summary_line(self, result) -> str:
        m = result.metrics
        acc = "n/a" if m.accuracy is None else f"{m.accuracy:.3f}"
        ci = interval_text(m.ci95 or m.wilson95, m.ci95_method, "episodes")
        st = m.statuses
        resumed = f", {result.resumed} kept from the earlier run" if result.resumed else ""
        public = f" (public scorer {m.accuracy_public:.3f})" if m.accuracy_public not in (None, m.accuracy) else ""
        cut = f"{st['truncated']} truncated, " if st.get("truncated") else ""
        missing = m.audio_received.get("not_received", 0)
        unheard = f" ({missing} audio not received)" if missing else ""
        return (f"{result.spec.label()}: accuracy {acc}{ci}{public} over {m.n} episodes; {st.get('answered', 0)} "
                f"answered, {st.get('refused', 0)} refused, {cut}{st.get('error', 0)} errors{unheard}{resumed} "
                f"-> {result.run_dir}")

    def headline(self, metrics: Any) -> tuple[float | None, int]:
        """Accuracy and the number of items it is over, for tables."""
        return metrics.accuracy, metrics.n

    def scored(self, record: EpisodeRecord) -> bool:
        return True

    def reference_keys(self) -> tuple[str, ...]:
        return ("id", "benchmark", "task", "shots", "model", "seed", "response", "prediction", "gt", "correct", "status",
                "scoring")


BENCHMARK = AudioICLBenchmark()
