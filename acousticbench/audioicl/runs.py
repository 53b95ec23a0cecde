"""AudioICL runs through the AcousticBench engine: one backend session per model, one run folder per (task, k, seed)."""
from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from acousticbench import provenance
from acousticbench.audioicl.episodes import Episode, check_audio, load_episodes, meta_path
from acousticbench.audioicl.pack import manifest_sha256, pack_root
from acousticbench.audioicl.padding import PAD_NOTE
from acousticbench.audioicl.prompts import build_prompt, load_alphabet, template_sha256
from acousticbench.audioicl.record import FINAL_STATUSES, EpisodeRecord, ICLMetrics, icl_metrics, make_episode_record
from acousticbench.audioicl.spec import ICLRunSpec
from acousticbench.engine import RetryPolicy, run_questions
from acousticbench.errors import UserError
from acousticbench.records import Prompt
from acousticbench.results import (
    CONFIG, METRICS, RESPONSES, ResponsesWriter, latest_run_dir, new_run_dir, read_records, rewrite_sorted, write_json,
)


@dataclass(frozen=True)
class Prepared:
    """A run ready to send: its episodes and their prompts, checked before any backend starts."""

    spec: ICLRunSpec
    items: list[tuple[Episode, Prompt]]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class ICLRunResult:
    spec: ICLRunSpec
    run_dir: Path
    metrics: ICLMetrics
    records: list[EpisodeRecord]
    resumed: int


def prepare(spec: ICLRunSpec, cache: dict | None = None) -> Prepared:
    """Load the task's episodes of meta_k{k}.jsonl (first --max-samples), check the audio, render the prompts."""
    cache = {} if cache is None else cache
    key = (str(spec.meta), spec.shots)
    if key not in cache:
        cache[key] = load_episodes(spec.meta, spec.shots)
    episodes = [e for e in cache[key] if e.task == spec.task][: spec.max_samples]
    if not episodes:
        raise UserError(f"{meta_path(spec.meta, spec.shots)} has no {spec.task} episodes.")
    check_audio(episodes, spec.base, meta_path(spec.meta, spec.shots))
    alphabet = load_alphabet(spec.morse_alphabet) if spec.morse_alphabet and spec.task == "MorseCode" else None
    pad_dir = spec.results_dir / ".audioicl-padded" if spec.pad else None
    items = [(e, build_prompt(e, spec.base, style=spec.prompt_style, seed=spec.seed, alphabet=alphabet, pad_dir=pad_dir))
             for e in episodes]
    return Prepared(spec, items, (PAD_NOTE,) if spec.pad else ())


def _config(prep: Prepared, backend) -> dict:
    spec = prep.spec
    meta = meta_path(spec.meta, spec.shots)
    return {
        "spec": spec.to_json(), "backend": backend.provenance(), "harness": provenance.harness(),
        "audioicl": {**spec.settings(), "meta_file": str(meta), "meta_sha256": provenance_sha256(meta),
                     "pack_manifest_sha256": manifest_sha256(pack_root(spec.archive)) if spec.meta_dir is None else None},
        "prompt_template_sha256": template_sha256(spec.prompt_style),
        "n_episodes": len(prep.items),
    }


def provenance_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _resume_state(spec: ICLRunSpec, prefix: str) -> tuple[Path | None, list[EpisodeRecord]]:
    run_dir = latest_run_dir(spec.results_dir, prefix) if spec.resume else None
    if run_dir is None:
        return None, []
    config = run_dir / CONFIG
    earlier = json.loads(config.read_text()).get("audioicl", {}) if config.is_file() else {}
    changed = {k: (earlier.get(k), v) for k, v in spec.settings().items() if k in earlier and earlier[k] != v}
    if changed:
        what = ", ".join(f"{k} {old!r} -> {new!r}" for k, (old, new) in changed.items())
        raise UserError(f"--resume: the latest run {run_dir} used other settings ({what}); rerun without --resume "
                        "or with the same settings.")
    return run_dir, [r for r in read_records(run_dir / RESPONSES, EpisodeRecord) if r.status in FINAL_STATUSES]


async def _run_one(prep: Prepared, backend, progress: bool | None) -> ICLRunResult:
    spec = prep.spec
    prefix = spec.run_prefix(backend.backend_name)
    run_dir, kept = _resume_state(spec, prefix)
    run_dir = run_dir or new_run_dir(spec.results_dir, prefix)
    wanted = {e.id for e, _ in prep.items}
    kept = [r for r in kept if r.id in wanted]
    rewrite_sorted(run_dir / RESPONSES, kept)  # drops a torn last line and episodes that are asked again
    write_json(run_dir / CONFIG, _config(prep, backend))
    done = {r.id for r in kept}

    def make_record(episode, prompt, model, outcome):
        return make_episode_record(episode, prompt, model, outcome, shots=spec.shots, scoring=spec.scoring,
                                   base=spec.base, notes=prep.notes)

    writer = ResponsesWriter(run_dir / RESPONSES)
    try:
        new = await run_questions(
            [item for item in prep.items if item[0].id not in done], backend, spec.model,
            concurrency=spec.concurrency or backend.default_concurrency, policy=RetryPolicy(),
            on_record=writer.append, max_error_rate=spec.max_error_rate, progress=progress, make_record=make_record)
    finally:
        writer.close()
    records = sorted(kept + new, key=lambda r: r.id)
    rewrite_sorted(run_dir / RESPONSES, records)
    metrics = icl_metrics(records, model=spec.model, task=spec.task, shots=spec.shots, seed=spec.seed,
                          prompt_style=spec.prompt_style, scoring=spec.scoring)
    write_json(run_dir / METRICS, metrics.model_dump(mode="json"))
    return ICLRunResult(spec, run_dir, metrics, records, resumed=len(kept))


async def _session(backend, prepared: list[Prepared], progress: bool | None, on_result) -> None:
    """One backend session for every run of a model: a local server starts once, not once per (task, k)."""
    try:
        await backend.open()
        for prep in prepared:
            on_result(await _run_one(prep, backend, progress))
    finally:
        await backend.close()


def run_all(specs: list[ICLRunSpec], on_result, progress: bool | None = None) -> None:
    """Prepare every run (errors surface before any model starts), then run them, grouped by model settings."""
    from acousticbench.models.registry import get_model

    cache: dict = {}
    prepared = [prepare(spec, cache) for spec in specs]
    groups: dict[tuple, list[Prepared]] = {}
    for prep in prepared:
        s = prep.spec
        groups.setdefault((s.model, tuple(sorted(s.backend_overrides().items(), key=str))), []).append(prep)
    for (model, _), preps in groups.items():
        backend = get_model(model).create(**preps[0].spec.backend_overrides())
        asyncio.run(_session(backend, preps, progress, on_result))
