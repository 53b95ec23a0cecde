"""Build the open AcousticBench pack from the signal generators: deterministic, in parallel, and all or nothing."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from acousticbench.benchmarks.acoustic.pack import MANIFEST, questions_relpath, write_manifest, write_questions
from acousticbench.benchmarks.acoustic.pack.pinned import OPEN_PACK_BENCHMARK, OPEN_PACK_VERSION
from acousticbench.packs.staging import default_workers, staged_folder
from acousticbench.packs.workers import map_in_processes
from acousticbench.core.audio import SAMPLE_RATE, write_pcm16, write_wav
from acousticbench.core.errors import UserError
from acousticbench.benchmarks.acoustic.records import Choice, Question, Split
from acousticbench.benchmarks.acoustic.stimuli import ATTRIBUTES
from acousticbench.benchmarks.acoustic.tasks import TASKS

BUILD_SEED = 20_260_101  # the one seed of the open pack; changing it changes every file and the pinned hash
LEVELS = 5
SPLITS: tuple[Split, Split] = ("train", "eval")
PER_CELL = 20  # questions per (level, split, answer): 5 x 2 x 2 x 20 = 400 scored
N_SCORED = LEVELS * len(SPLITS) * 2 * PER_CELL
N_CATCH = N_IDENTICAL = N_SWAP = 25
N_DIAGNOSTIC = N_CATCH + N_IDENTICAL + N_SWAP
CHUNK = 25  # questions per worker job: small enough to balance two cores, large enough to amortise the hand-off


@dataclass(frozen=True)
class Spec:
    """What one question will be, before any audio exists."""

    number: int
    split: Split
    answer: Choice | None
    level: int | None
    probe: str | None = None  # None (scored) | "catch" | "identical" | "swap"
    twin_of: int | None = None  # the original's number, for "swap"

    def qid(self, code: str) -> str:
        return question_id(code, self.number)


def question_id(code: str, number: int) -> str:
    return f"{code}_{number:04d}"


def question_rng(code: str, number: int) -> np.random.Generator:
    """An independent generator per (task, question): results do not depend on worker count or order."""
    task_key = int.from_bytes(code.encode("ascii"), "big")
    return np.random.default_rng(np.random.SeedSequence([BUILD_SEED, task_key, number]))


def flipped(answer: Choice | None) -> Choice | None:
    return None if answer is None else "B" if answer == "A" else "A"


def plan(code: str) -> list[Spec]:
    """All 475 questions of a task in id order: 400 scored, then catch, identical and swap diagnostics."""
    cells = [(level, split, answer) for level in range(1, LEVELS + 1) for split in SPLITS for answer in ("A", "B")]
    order = question_rng(code, 0)
    scored: list[Spec] = []
    for _ in range(PER_CELL):  # every block of 20 ids holds each (level, split, answer) once: any prefix is representative
        for cell in order.permutation(len(cells)):
            level, split, answer = cells[cell]
            scored.append(Spec(len(scored) + 1, split, answer, level))
    first = N_SCORED + 1
    # answers alternate every id, splits every second id: neither predicts the other
    catch = [Spec(first + i, SPLITS[(i // 2) % 2], "AB"[i % 2], None, "catch") for i in range(N_CATCH)]
    first += N_CATCH
    identical = [Spec(first + i, SPLITS[i % 2], None, None, "identical") for i in range(N_IDENTICAL)]
    return scored + catch + identical + swap_plan(scored, first + N_IDENTICAL)


def swap_plan(scored: list[Spec], first: int) -> list[Spec]:
    """Twins of the lowest-numbered scored questions, spread over levels, splits and answers.

    A twin keeps its original's split: the same audio in both halves would leak train into eval.
    """
    used: set[int] = set()
    twins = []
    for i in range(N_SWAP):
        want = (1 + i % LEVELS, SPLITS[i % 2], "AB"[(i // 2) % 2])
        original = next(s for s in scored if (s.level, s.split, s.answer) == want and s.number not in used)
        used.add(original.number)
        twins.append(Spec(first + i, original.split, flipped(original.answer), original.level, "swap", original.number))
    return twins


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_question(root: Path, code: str, spec: Spec) -> Question:
    """Generate, write and describe one catch, identical or scored question."""
    module = ATTRIBUTES[code]
    step = {None: module.STEPS[(spec.level or 1) - 1], "catch": module.CATCH_STEP, "identical": 0.0}[spec.probe]
    trial = module.trial(question_rng(code, spec.number), step, spec.answer or "A")
    clips, params = trial.clips, list(trial.clip_params)
    if spec.probe == "identical":  # the very same samples in every clip
        clips, params = (clips[0],) * len(clips), [params[0]] * len(params)
    audio, sha256 = [], {}
    for k, clip in enumerate(clips, 1):
        rel = f"{code}/audio/{spec.qid(code)}_{k}.wav"
        write_wav(root / rel, clip, SAMPLE_RATE)
        audio.append(rel)
        sha256[rel] = file_sha256(root / rel)
    meta = {
        "attribute": module.ATTRIBUTE,
        "level": spec.level,
        "probe": spec.probe,
        "twin_of": None,
        "step": step,
        "unit": module.UNIT,
        "clips": params,
        "shared": trial.shared,
    }
    return sealed_question(code, spec, audio, meta, sha256)


def sealed_question(code: str, spec: Spec, audio: list[str], meta: dict[str, Any], sha256: dict[str, str]) -> Question:
    kind = "scored" if spec.probe is None else "diagnostic"
    return Question(
        id=spec.qid(code), task=code, split=spec.split, kind=kind, prompt=TASKS[code].prompt(),
        audio=audio, answer=spec.answer, meta=meta, sha256=sha256,
    ).sealed()


def swap_twin(root: Path, code: str, spec: Spec, original: Question) -> Question:
    """The original's clips in reversed order; a one-clip (stereo) task gets its channels mirrored into a new file."""
    meta = {**original.meta, "probe": "swap", "twin_of": original.id}
    if len(original.audio) == 1:
        import soundfile as sf

        data, rate = sf.read(str(root / original.audio[0]), dtype="int16", always_2d=True)
        rel = f"{code}/audio/{spec.qid(code)}_1.wav"
        write_pcm16(root / rel, np.ascontiguousarray(data[:, ::-1]), rate)
        audio, sha256 = [rel], {rel: file_sha256(root / rel)}
        meta["clips"] = [ATTRIBUTES[code].mirrored(p) for p in original.meta["clips"]]
    else:
        audio, sha256 = original.audio[::-1], dict(original.sha256)
        meta["clips"] = original.meta["clips"][::-1]
    return sealed_question(code, spec, audio, meta, sha256)


def build_chunk(job: tuple[str, str, list[Spec]]) -> list[Question]:
    """Worker entry point: one task's slice of questions (swap twins excluded)."""
    root, code, specs = job
    return [build_question(Path(root), code, spec) for spec in specs]


def run_jobs(jobs: list[tuple[str, str, list[Spec]]], workers: int) -> list[list[Question]]:
    if workers <= 1:
        return [build_chunk(job) for job in jobs]
    return map_in_processes(build_chunk, jobs, workers)


def build_tasks(root: Path, codes: list[str], workers: int | None = None, numbers: set[int] | None = None) -> dict[str, list[Question]]:
    """Write the audio of `codes` under `root` and return their questions (only `numbers`, if given; for tests)."""
    plans = {code: [s for s in plan(code) if numbers is None or s.number in numbers] for code in codes}
    jobs = []
    for code, specs in plans.items():
        (root / code / "audio").mkdir(parents=True, exist_ok=True)
        made = [s for s in specs if s.probe != "swap"]
        jobs += [(str(root), code, made[i : i + CHUNK]) for i in range(0, len(made), CHUNK)]
    workers = min(workers or default_workers(), max(1, len(jobs)))
    built: dict[str, list[Question]] = {code: [] for code in codes}
    for (_, code, _), questions in zip(jobs, run_jobs(jobs, workers)):
        built[code] += questions
    for code, specs in plans.items():
        built[code] += [swap_twin(root, code, spec, original_of(root, code, spec, built[code])) for spec in specs if spec.probe == "swap"]
    return built


def original_of(root: Path, code: str, twin: Spec, built: list[Question]) -> Question:
    """The scored question a swap twin mirrors; built here if a partial build (a test) left it out."""
    found = next((q for q in built if q.id == question_id(code, twin.twin_of or 0)), None)
    return found or build_question(root, code, next(s for s in plan(code) if s.number == twin.twin_of))


def refuse_existing(root: Path) -> None:
    if (root / MANIFEST).exists():
        raise UserError(f"{root} already holds a benchmark pack ({MANIFEST} exists): choose another "
                        "--archive, or move that pack away first; nothing was written.")
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise UserError(f"{root} exists and is not an empty folder: choose another --archive, or move "
                        "its files away first; nothing was written.")


def build_open_pack(root: Path, *, workers: int | None = None) -> str:
    """Build the full open pack (8 tasks, 3,800 questions) at `root`; returns the MANIFEST.json sha256.

    Everything is written to a sibling temporary folder that is renamed to `root` only when complete,
    so an interrupted build never leaves a half pack where a pack is expected.
    """
    root = Path(root)
    refuse_existing(root)
    with staged_folder(root) as staging:
        digest = write_pack(staging, workers)
    return digest


def write_pack(root: Path, workers: int | None) -> str:
    codes = list(TASKS)
    built = build_tasks(root, codes, workers)
    sha256 = {questions_relpath(code): write_questions(root, code, built[code]) for code in codes}
    tasks = {
        code: {"title": TASKS[code].title, "clips": TASKS[code].clips, "n_scored": N_SCORED, "n_diagnostic": N_DIAGNOSTIC}
        for code in codes
    }
    return write_manifest(root, OPEN_PACK_BENCHMARK, OPEN_PACK_VERSION, tasks=tasks, sha256=sha256)
