"""The check before a run trusts a pack: what the run will use must be what MANIFEST.json and the questions pin,
and every audio path must stay inside the pack. A mismatch refuses the run with one line naming the question."""
from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from acousticbench.archive import verified
from acousticbench.archive.pack import BUILD_HINT, load_manifest, questions_relpath
from acousticbench.errors import ArchiveError
from acousticbench.records import Question

_WORKERS = min(4, os.cpu_count() or 1)  # hashing releases the GIL


def outside_reason(root: str, rel: str) -> str | None:
    """Why `rel` does not name a file inside the folder `root` (absolute, '..', a link leading out), or None."""
    parts = rel.replace("\\", "/").split("/")
    if not rel or os.path.isabs(rel) or parts[0] == "" or ":" in parts[0]:
        return "an absolute path"
    if ".." in parts:
        return "a path with '..'"
    inside = _real_root(root) + os.sep
    path = os.path.join(root, rel)
    # the folders are resolved once each (a pack has a few), the file itself only when it is a link
    folder_ok = (_real_folder(os.path.dirname(path)) + os.sep).startswith(inside)
    if not folder_ok or (os.path.islink(path) and not os.path.realpath(path).startswith(inside)):
        return "a link that leads outside the pack"
    return None


@lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    return os.path.realpath(root)


@lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def _hash_all(paths: list[str], hasher) -> dict[str, str | None]:
    """sha256 (or `hasher`) of every path, in batches over a few threads: one future per clip costs as much as
    hashing it."""
    batches = [paths[i : i + 64] for i in range(0, len(paths), 64)]
    with ThreadPoolExecutor(_WORKERS) as pool:
        results = pool.map(lambda batch: [hasher(p) for p in batch], batches)
        return dict(zip(paths, (digest for batch in results for digest in batch)))


def contained(root: Path, rel: str, who: str) -> str:
    """The absolute path of `rel` under `root`, or ArchiveError naming `who` (a question or an episode)."""
    base = _absolute(str(root))
    reason = outside_reason(base, rel)
    if reason:
        raise ArchiveError(f"{who}: audio path {rel!r} is {reason}; a pack may only name files inside its folder "
                           f"{root} (nothing outside it is read or sent).")
    return os.path.join(base, rel)


@lru_cache(maxsize=64)  # abspath asks the system for the working folder: once per pack, not once per clip
def _absolute(root: str) -> str:
    return os.path.abspath(root)


def _sha256(path: str) -> str | None:
    try:
        with open(path, "rb", buffering=0) as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def _questions_file(root: Path, task: str, questions: list[Question]) -> None:
    rel = questions_relpath(task)
    listed = load_manifest(root).get("sha256", {})
    expected = listed.get(rel, listed.get(task))
    actual = _sha256(str(root / rel))
    if expected is not None and actual == expected:
        return
    bad = next((q for q in questions if q.compute_checksum() != q.checksum), None)
    where = f"question {bad.id} in {root / rel} was changed after the pack was built" if bad else (
        f"{root / rel} does not match {'MANIFEST.json' if expected else 'any sha256 in MANIFEST.json'}")
    raise ArchiveError(f"the pack is not what it claims: {where}; check it with --verify-checksums and {BUILD_HINT}.")


def _verified_digests(root: Path, files: dict, expected: dict[str, str | None]) -> dict[str, str | None]:
    """sha256 of every file, hashing only those changed since they last matched their pins (archive/verified.py);
    the ones found matching now are remembered."""
    digests: dict[str, str | None] = verified.known(str(root), list(files))
    fresh = _hash_all([p for p in files if p not in digests], _sha256)
    digests.update(fresh)
    verified.remember(str(root), {p: d for p, d in fresh.items() if d is not None and d == expected[p]})
    return digests


def check_questions(root: Path, task: str, all_questions: list[Question], selected: list[Question]) -> int:
    """Refuse a pack whose questions file or selected questions' audio differ from what is pinned; returns the
    number of audio files checked. A questions file that matches MANIFEST.json holds every line as built, so each
    question's own checksum is recomputed only to name the one that changed when it does not."""
    _questions_file(root, task, all_questions)
    files: dict[str, tuple[str, str | None]] = {}
    for q in selected:
        for rel in q.audio:
            files[contained(root, rel, f"question {q.id}")] = (q.id, q.sha256.get(rel))
    digests = _verified_digests(root, files, {p: expected for p, (_, expected) in files.items()})
    for path, (qid, expected) in files.items():
        got = digests[path]
        if got is None:
            raise ArchiveError(f"question {qid}: audio file {path} is missing or unreadable; {BUILD_HINT}.")
        if got != expected:
            what = "has no sha256 in the question" if expected is None else "differs from the one the pack was built with"
            raise ArchiveError(f"question {qid}: audio file {path} {what} (damaged or replaced); check the pack with "
                               f"--verify-checksums and {BUILD_HINT}.")
    return len(files)


def check_episode_audio(paths_by_episode: dict[str, list[str]], base: Path, where: str,
                        pinned: dict[str, str] | None) -> int:
    """AudioICL: every clip an episode names lies inside `base` and exists; where the pack's MANIFEST.json pins the
    clips (`pinned`: path -> sha256), each matches. Returns the number of files checked."""
    files: dict[str, tuple[str, str]] = {}
    for episode_id, paths in paths_by_episode.items():
        for rel in paths:
            files[contained(base, rel, f"episode {episode_id} in {where}")] = (episode_id, rel)
    digests = (_verified_digests(base, files, {p: pinned.get(rel) for p, (_, rel) in files.items()})
               if pinned is not None else _hash_all(list(files), _exists))
    for path, (episode_id, rel) in files.items():
        got = digests[path]
        if got is None:
            raise ArchiveError(f"episode {episode_id} in {where}: audio file {path} is missing or unreadable (paths "
                               f"are relative to --icl-base, the folder that holds data/); {BUILD_HINT_ICL}.")
        if pinned is not None and got != pinned.get(rel):
            what = "is not listed in" if rel not in pinned else "differs from"
            raise ArchiveError(f"episode {episode_id} in {where}: audio file {path} {what} the pack's MANIFEST.json "
                               f"(damaged or replaced); check it with --verify-checksums and {BUILD_HINT_ICL}.")
    return len(files)


def check_file(path: Path, expected: str | None, what: str) -> None:
    """A file the pack's manifest pins (an AudioICL meta file) must match it."""
    if expected is not None and _sha256(str(path)) != expected:
        raise ArchiveError(f"{path} differs from the {what} MANIFEST.json pins (edited or damaged); check it with "
                           f"--verify-checksums and {BUILD_HINT_ICL}.")


def _exists(path: str) -> str | None:
    return "" if os.path.isfile(path) else None


BUILD_HINT_ICL = "rebuild the open pack with `python run.py --build-audioicl`, or pass --icl-meta DIR and --icl-base DIR"
