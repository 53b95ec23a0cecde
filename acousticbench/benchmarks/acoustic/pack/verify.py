"""Checksum verification of a pack: each question's own checksum, its audio files, and MANIFEST.json."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from acousticbench.packs.audio_format import clip_problems
from acousticbench.packs.files import BATCH, WORKERS, Containment, Unreadable, file_sha256
from acousticbench.benchmarks.acoustic.pack.manifest_schema import pack_problems, promised_format
from acousticbench.benchmarks.acoustic.pack import (
    BUILD_HINT, MANIFEST, RUN_MADE, UndecodableLine, listed_sha256, load_manifest, load_questions, manifest_sha256,
    questions_relpath,
)
from acousticbench.benchmarks.acoustic.records import Question

ADAPTIVE_FIX = ("these trials were made by an adaptive run, placed by its answers, and no pack build makes them again: "
                "run it again into a new run folder")


@dataclass(frozen=True)
class Failure:
    """One failed check: a question (None for a whole questions file), the file involved, and why."""

    question_id: str | None
    path: str
    reason: str

    def line(self) -> str:
        return f"{self.question_id}: {self.path}: {self.reason}" if self.question_id else f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of `verify_checksums`: how many questions were checked and what failed."""

    n_questions: int
    failures: list[Failure]
    fix: str = BUILD_HINT

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def failed_questions(self) -> list[str]:
        return list(dict.fromkeys(f.question_id for f in self.failures if f.question_id))

    def lines(self) -> list[str]:
        """Exactly what the CLI prints."""
        n = self.n_questions
        if self.ok:
            return [f"All {n} questions passed checksum verification."]
        summary = f"{len(self.failed_questions)} of {n} questions failed checksum verification."
        n_files = len({f.path for f in self.failures if f.question_id is None})
        if n_files:
            summary += f" {n_files} questions file{'s' if n_files > 1 else ''} did not match {MANIFEST}."
        return [f.line() for f in self.failures] + [summary, f"To fix: {self.fix}."]


def verify_checksums(root: Path, tasks: list[str]) -> VerifyReport:
    """Recompute every checksum of the given tasks; malformed questions raise ArchiveError naming file and line."""
    manifest = load_manifest(root)
    by_task: dict[str, list[Question]] = {}
    file_failures: dict[str, list[Failure]] = {}
    sealed: dict[str, list[bool]] = {}
    queued: dict[str, None] = {}  # each file is hashed once, however many questions use it
    batches = []
    undecodable: list[Failure] = []
    where = Containment(str(root))
    with ThreadPoolExecutor(WORKERS) as pool:
        for task in dict.fromkeys(tasks):
            bad: list[UndecodableLine] = []  # the damage verification exists to find: failure lines, not a crash
            by_task[task] = questions = load_questions(root, task, undecodable=bad)
            # a damaged line with no readable id is still a question (not a questions file) in the summary
            undecodable += [Failure(err.item_id or f"line {err.lineno}", questions_relpath(task), err.reason)
                            for err in bad]
            new = list(dict.fromkeys(p for q in questions for p in q.audio if p not in queued))
            queued.update(dict.fromkeys(new))
            batches += [(chunk, pool.submit(_hash_batch, where, chunk)) for chunk in _chunks(new, BATCH)]
            # The pure-Python checks run here while the pool reads and hashes the audio.
            file_failures[task] = _questions_file_failure(root, task, manifest)
            sealed[task] = [q.compute_checksum() == q.checksum for q in questions]
        digests = {path: digest for chunk, future in batches for path, digest in zip(chunk, future.result())}
    # each clip against the format its task's pack promises (a clip two tasks share: the first task's promise)
    promises = {rel: promised_format(manifest, task) for task, qs in reversed(by_task.items()) for q in qs
                for rel in q.audio if isinstance(digests.get(rel), str)}
    found = clip_problems({where.path(rel): promise for rel, promise in promises.items()})
    formats = {rel: found[where.path(rel)] for rel in promises if where.path(rel) in found}
    failures: list[Failure] = list(undecodable)
    for task, questions in by_task.items():
        failures.extend(file_failures[task])
        failures.extend(Failure(qid, questions_relpath(task), why) for qid, why in pack_problems(manifest, task, questions))
        for q, sealed_ok in zip(questions, sealed[task]):
            failures.extend(_question_failures(task, q, sealed_ok, digests, formats))
    made_by_a_run = manifest.get("benchmark") == RUN_MADE  # no pack build makes these clips again
    return VerifyReport(sum(len(qs) for qs in by_task.values()) + len(undecodable), failures,
                        ADAPTIVE_FIX if made_by_a_run else BUILD_HINT)


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _hash_batch(where: Containment, paths: list[str]) -> list[str | Unreadable]:
    """The sha256 of each file, or why it is unreadable; a path that leads outside the pack is not read."""
    out: list[str | Unreadable] = []
    for rel in paths:
        reason = where.outside_reason(rel)
        out.append(Unreadable(f"audio path points outside the pack folder ({reason})") if reason else file_sha256(where.path(rel)))
    return out


def _questions_file_failure(root: Path, task: str, manifest: dict) -> list[Failure]:
    rel = questions_relpath(task)
    expected = listed_sha256(manifest, task)
    actual = file_sha256(str(root / rel))
    if expected is None:
        return [Failure(None, rel, "no sha256 for this file in MANIFEST.json (the manifest was edited or belongs to another pack)")]
    if expected != actual:
        why = "the file was edited, or questions added or removed, after the pack was built"
        return [Failure(None, rel, f"sha256 does not match MANIFEST.json (expected {_short(expected)}, got {_short(actual)}): {why}")]
    return []


def _question_failures(task: str, q: Question, sealed_ok: bool, digests: dict[str, str | Unreadable],
                       formats: dict[str, str]) -> list[Failure]:
    failures = []
    if not sealed_ok:
        failures.append(Failure(q.id, questions_relpath(task), "question checksum mismatch (the question text was changed)"))
    for path in dict.fromkeys(q.audio):  # an identical pair lists one file twice: report it once
        expected = q.sha256.get(path)
        got = digests[path]
        if isinstance(got, Unreadable):
            failures.append(Failure(q.id, path, got.reason))
        elif expected is None:
            failures.append(Failure(q.id, path, "no sha256 recorded for this file in the question"))
        elif got != expected:
            failures.append(Failure(q.id, path, f"sha256 mismatch (expected {_short(expected)}, got {_short(got)})"))
        if path in formats:
            failures.append(Failure(q.id, path, formats[path]))
    return failures


def _short(digest: str) -> str:
    return f"{digest[:8]}…"


def pinned_pack_note(root: Path, *, pinned_benchmark: str | None = None, pinned_sha256: str | None = None) -> str | None:
    """A one-line warning when this pack claims to be the open pack but its manifest differs from the published one.

    The pin comes from acousticbench.benchmarks.acoustic.pack.pinned unless given.
    """
    if pinned_benchmark is None or pinned_sha256 is None:
        from acousticbench.benchmarks.acoustic.pack import pinned

        pinned_benchmark, pinned_sha256 = pinned.OPEN_PACK_BENCHMARK, pinned.OPEN_PACK_MANIFEST_SHA256
    if load_manifest(root).get("benchmark") != pinned_benchmark:
        return None
    actual = manifest_sha256(root)
    if actual == pinned_sha256:
        return None
    return (
        f"Note: this {pinned_benchmark} pack differs from the published open pack "
        f"(MANIFEST.json sha256 {actual[:12]}, published {pinned_sha256[:12]}), so results will not compare "
        "with published references; rebuild it with the pinned harness version."
    )

