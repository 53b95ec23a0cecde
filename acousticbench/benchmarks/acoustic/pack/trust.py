"""AcousticBench's check before a run trusts a pack: the manifest, the questions file and the selected questions'
audio must be what MANIFEST.json and the questions pin, in the format the pack promises (the generic checks are
packs/trust.py's)."""
from __future__ import annotations

from pathlib import Path

from acousticbench.benchmarks.acoustic.pack.manifest_schema import pack_problems, promised_format
from acousticbench.benchmarks.acoustic.pack import BUILD_HINT, listed_sha256, load_manifest, questions_relpath
from acousticbench.benchmarks.acoustic.records import Question
from acousticbench.core.errors import ArchiveError
from acousticbench.packs.files import Containment, file_sha256
from acousticbench.packs.trust import contained, verified_digests


def _questions_file(root: Path, task: str, questions: list[Question]) -> None:
    rel = questions_relpath(task)
    manifest = load_manifest(root)
    for qid, why in pack_problems(manifest, task, questions):  # a resealed file can still disagree with itself
        who = f"question {qid} in {root / rel}" if qid else f"{root / rel}"
        raise ArchiveError(f"the pack is not what it claims: {who} {why}; check it with `acousticbench pack verify` "
                           f"and {BUILD_HINT}.")
    expected = listed_sha256(manifest, task)
    if expected is not None and file_sha256(str(root / rel)) == expected:
        return
    bad = next((q for q in questions if q.compute_checksum() != q.checksum), None)
    where = f"question {bad.id} in {root / rel} was changed after the pack was built" if bad else (
        f"{root / rel} does not match {'MANIFEST.json' if expected else 'any sha256 in MANIFEST.json'}")
    raise ArchiveError(f"the pack is not what it claims: {where}; check it with `acousticbench pack verify` and "
                       f"{BUILD_HINT}.")


def check_questions(root: Path, task: str, all_questions: list[Question], selected: list[Question]) -> int:
    """Refuse a pack whose questions file or selected questions' audio differ from what is pinned; returns the
    number of audio files checked. A questions file that matches MANIFEST.json holds every line as built, so each
    question's own checksum is recomputed only to name the one that changed when it does not."""
    _questions_file(root, task, all_questions)
    where = Containment(str(root))
    files: dict[str, tuple[str, str | None]] = {}
    for q in selected:
        for rel in q.audio:
            files[contained(where, rel, f"question {q.id}")] = (q.id, q.sha256.get(rel))
    promised = promised_format(load_manifest(root), task)
    digests, bad = verified_digests(root, list(files), {p: expected for p, (_, expected) in files.items()}, promised)
    for path, (qid, expected) in files.items():
        got = digests[path]
        if got is None:
            raise ArchiveError(f"question {qid}: audio file {path} is missing or unreadable; {BUILD_HINT}.")
        if got != expected:
            what = "has no sha256 in the question" if expected is None else "differs from the one the pack was built with"
            raise ArchiveError(f"question {qid}: audio file {path} {what} (damaged or replaced); check the pack with "
                               f"`acousticbench pack verify` and {BUILD_HINT}.")
        if path in bad:  # never sent to a model as it is: a model would hear something the pack does not promise
            raise ArchiveError(f"question {qid}: audio file {path} {bad[path]}; check the pack with "
                               f"`acousticbench pack verify` and {BUILD_HINT}.")
    return len(files)
