"""Build the open AudioICL pack into <archive>/audioicl/ (public layout): deterministic, in parallel, all or nothing."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from acousticbench.benchmarks.audioicl import TASKS
from acousticbench.benchmarks.audioicl.build.plan import BUILD_SEED, EPISODES_PER_TASK, MAX_SHOTS, ClipJob, TaskPlan, with_shots
from acousticbench.benchmarks.audioicl.build.speech import digits_sha256
from acousticbench.benchmarks.audioicl.pack import FOLDER, MANIFEST, OPEN_BENCHMARK, OPEN_VERSION
from acousticbench.packs.staging import staged_folder
from acousticbench.packs.workers import map_in_processes
from acousticbench.core.errors import UserError

CHUNK = 40  # clips per worker job


def _modules():
    from acousticbench.benchmarks.audioicl.build import anomaly, counting, lengths, morse, operators, remap

    return {"AudioCount": counting, "AudioCountHard": counting, "AudioOperator": operators,
            "AudioOperatorHard": operators, "AudioLength": lengths, "AudioLengthHard": lengths,
            "MorseCode": morse, "AudioRemap": remap, "AnomalyDetect": anomaly}


def plan_pack(episodes_per_task: int = EPISODES_PER_TASK) -> dict[str, TaskPlan]:
    """Every task's episodes and clips; fewer episodes keep a prefix of the full plan (the letter bank always)."""
    if not 1 <= episodes_per_task <= EPISODES_PER_TASK:
        raise UserError(f"episodes per task must be from 1 to {EPISODES_PER_TASK}, got {episodes_per_task}.")
    modules = _modules()
    plans = {}
    for task in TASKS:
        always = modules[task].alphabet_paths() if task == "MorseCode" else ()
        plans[task] = modules[task].plan(task).truncated(episodes_per_task, always)
    return plans


def render_chunk(job: tuple[str, list[ClipJob]]) -> list[tuple[str, str]]:
    """Worker entry point: render and write clips; returns (path, sha256) for each."""
    import numpy as np

    from acousticbench.core.audio import write_wav
    from acousticbench.benchmarks.audioicl.build.plan import SR

    root, clips = job
    renderers = {"count": "counting", "length": "lengths", "operator": "operators", "morse": "morse",
                 "remap": "remap", "machine": "anomaly"}
    out = []
    for clip in clips:
        module = __import__(f"acousticbench.benchmarks.audioicl.build.{renderers[clip.kind]}", fromlist=["render"])
        g = np.random.default_rng(np.random.SeedSequence([BUILD_SEED, *clip.params["seed"]]))
        target = Path(root) / clip.path
        target.parent.mkdir(parents=True, exist_ok=True)
        write_wav(target, module.render(clip.params, g), SR)
        out.append((clip.path, hashlib.sha256(target.read_bytes()).hexdigest()))
    return out


def render_all(root: Path, clips: list[ClipJob], workers: int) -> dict[str, str]:
    jobs = [(str(root), clips[i : i + CHUNK]) for i in range(0, len(clips), CHUNK)]
    if workers <= 1 or len(jobs) <= 1:
        results = [render_chunk(job) for job in jobs]
    else:
        results = map_in_processes(render_chunk, jobs, workers)
    return dict(pair for chunk in results for pair in chunk)


def write_pack(root: Path, plans: dict[str, TaskPlan], workers: int) -> str:
    """Audio, meta_k1..5.jsonl and MANIFEST.json under `root`; returns the manifest's sha256."""
    clips = sorted({p: j for plan in plans.values() for p, j in plan.clips.items()}.values(), key=lambda j: j.path)
    sha256 = render_all(root, clips, workers)
    episodes = sorted((e for plan in plans.values() for e in plan.episodes), key=lambda e: e["id"])
    (root / "meta").mkdir(parents=True, exist_ok=True)
    for k in range(1, MAX_SHOTS + 1):
        data = "".join(json.dumps(with_shots(e, k), ensure_ascii=False, allow_nan=False) + "\n"
                       for e in episodes).encode("utf-8")
        (root / "meta" / f"meta_k{k}.jsonl").write_bytes(data)
        sha256[f"meta/meta_k{k}.jsonl"] = hashlib.sha256(data).hexdigest()
    manifest = {
        "benchmark": OPEN_BENCHMARK, "version": OPEN_VERSION, "build_seed": BUILD_SEED,
        "spoken_digits": digits_sha256(),  # the shipped digit files the operator clips speak
        "tasks": {task: len(plans[task].episodes) for task in TASKS}, "shots": list(range(1, MAX_SHOTS + 1)),
        "counts": {"episodes": len(episodes), "audio_files": len(clips)},
        "sha256": dict(sorted(sha256.items())),
    }
    data = (json.dumps(manifest, indent=1, sort_keys=True, allow_nan=False) + "\n").encode("utf-8")
    (root / MANIFEST).write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def build_audioicl(archive: Path, *, episodes_per_task: int = EPISODES_PER_TASK, workers: int | None = None) -> str:
    """Build the pack at <archive>/audioicl; returns its MANIFEST.json sha256.

    Written to a temporary sibling folder renamed into place only when complete, so an interrupted build never
    leaves half a pack where one is expected.
    """
    from acousticbench.packs.staging import default_workers
    from acousticbench.benchmarks.audioicl.build.speech import all_digits

    root = Path(archive) / FOLDER
    if root.exists():
        raise UserError(f"{root} already exists: choose another --archive to build the AudioICL "
                        "pack, or move that folder away first; nothing was written.")
    all_digits()  # fail before any work when a shipped spoken digit is missing
    plans = plan_pack(episodes_per_task)
    with staged_folder(root) as staging:
        digest = write_pack(staging, plans, workers or default_workers())
    return digest
