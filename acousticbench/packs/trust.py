"""The check before a run trusts a pack: what the run will use must be what MANIFEST.json and the questions pin,
and every audio path must stay inside the pack. A mismatch refuses the run with one line naming the question."""
from __future__ import annotations

import os
from pathlib import Path

from acousticbench.packs import verified
from acousticbench.packs.audio_format import ClipFormat, clip_problems
from acousticbench.packs.files import Containment, Unreadable, file_sha256, sha256_many
from acousticbench.benchmarks.acoustic.manifest import pack_problems, promised_format
from acousticbench.benchmarks.acoustic.pack import BUILD_HINT, listed_sha256, load_manifest, questions_relpath
from acousticbench.errors import ArchiveError
from acousticbench.records import Question


def contained(where: Containment, rel: str, who: str) -> str:
    """The absolute path of `rel` under the pack, or ArchiveError naming `who` (a question or an episode)."""
    reason = where.outside_reason(rel)
    if reason:
        raise ArchiveError(f"{who}: audio path {rel!r} is {reason}; a pack may only name files inside its folder "
                           f"{where.root} (nothing outside it is read or sent).")
    return where.path(rel)


def _questions_file(root: Path, task: str, questions: list[Question]) -> None:
    rel = questions_relpath(task)
    manifest = load_manifest(root)
    for qid, why in pack_problems(manifest, task, questions):  # a resealed file can still disagree with itself
        who = f"question {qid} in {root / rel}" if qid else f"{root / rel}"
        raise ArchiveError(f"the pack is not what it claims: {who} {why}; check it with --verify-checksums and "
                           f"{BUILD_HINT}.")
    expected = listed_sha256(manifest, task)
    if expected is not None and file_sha256(str(root / rel)) == expected:
        return
    bad = next((q for q in questions if q.compute_checksum() != q.checksum), None)
    where = f"question {bad.id} in {root / rel} was changed after the pack was built" if bad else (
        f"{root / rel} does not match {'MANIFEST.json' if expected else 'any sha256 in MANIFEST.json'}")
    raise ArchiveError(f"the pack is not what it claims: {where}; check it with --verify-checksums and {BUILD_HINT}.")


def _verified_digests(root: Path, paths: list[str], expected: dict[str, str | None],
                      promised: ClipFormat | None = None) -> tuple[dict[str, str | None], dict[str, str]]:
    """sha256 of every file, hashing only those changed since they last matched their pins and `promised`
    (packs/verified.py), and why each fresh one is not a clip of `promised`; the ones found good now are
    remembered. None: missing or unreadable."""
    tag = promised.describe() if promised else ""
    digests: dict[str, str | None] = verified.known(str(root), paths, tag)
    fresh = sha256_many([p for p in paths if p not in digests])
    digests.update({p: None if isinstance(d, Unreadable) else d for p, d in fresh.items()})
    bad = clip_problems(dict.fromkeys(fresh, promised)) if promised else {}
    verified.remember(str(root), {p: d for p, d in fresh.items() if d == expected[p] and p not in bad}, tag)
    return digests, bad


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
    digests, bad = _verified_digests(root, list(files), {p: expected for p, (_, expected) in files.items()}, promised)
    for path, (qid, expected) in files.items():
        got = digests[path]
        if got is None:
            raise ArchiveError(f"question {qid}: audio file {path} is missing or unreadable; {BUILD_HINT}.")
        if got != expected:
            what = "has no sha256 in the question" if expected is None else "differs from the one the pack was built with"
            raise ArchiveError(f"question {qid}: audio file {path} {what} (damaged or replaced); check the pack with "
                               f"--verify-checksums and {BUILD_HINT}.")
        if path in bad:  # never sent to a model as it is: a model would hear something the pack does not promise
            raise ArchiveError(f"question {qid}: audio file {path} {bad[path]}; check the pack with "
                               f"--verify-checksums and {BUILD_HINT}.")
    return len(files)


def check_episode_audio(paths_by_episode: dict[str, list[str]], base: Path, where: str,
                        pinned: dict[str, str] | None, hint: str, promised: ClipFormat | None = None) -> int:
    """AudioICL: every clip an episode names lies inside `base` and exists; where the pack's MANIFEST.json pins the
    clips (`pinned`: path -> sha256), each matches and is a clip of `promised`. Returns the number of files checked."""
    inside = Containment(str(base))
    files: dict[str, tuple[str, str]] = {}
    for episode_id, paths in paths_by_episode.items():
        for rel in paths:
            files[contained(inside, rel, f"episode {episode_id} in {where}")] = (episode_id, rel)
    bad: dict[str, str] = {}
    if pinned is None:  # episodes from elsewhere: nothing pins their clips, so only that they are there
        digests = {path: "" if os.path.isfile(path) else None for path in files}
    else:
        digests, bad = _verified_digests(base, list(files), {p: pinned.get(rel) for p, (_, rel) in files.items()},
                                         promised)
    for path, (episode_id, rel) in files.items():
        got = digests[path]
        if got is None:
            raise ArchiveError(f"episode {episode_id} in {where}: audio file {path} is missing or unreadable (paths "
                               f"are relative to --icl-base, the folder that holds data/); {hint}.")
        if pinned is not None and got != pinned.get(rel):
            what = "is not listed in" if rel not in pinned else "differs from"
            raise ArchiveError(f"episode {episode_id} in {where}: audio file {path} {what} the pack's MANIFEST.json "
                               f"(damaged or replaced); check it with --verify-checksums and {hint}.")
        if pinned is not None and path in bad:
            raise ArchiveError(f"episode {episode_id} in {where}: audio file {path} {bad[path]}; check it with "
                               f"--verify-checksums and {hint}.")
    return len(files)


def checked_sha256(path: Path, expected: str | None, what: str, hint: str) -> str:
    """The sha256 of a file the pack's manifest pins (an AudioICL meta file), refused when it does not match."""
    digest = file_sha256(str(path))
    if isinstance(digest, Unreadable) or (expected is not None and digest != expected):
        raise ArchiveError(f"{path} differs from the {what} MANIFEST.json pins (edited or damaged); check it with "
                           f"--verify-checksums and {hint}.")
    return digest
