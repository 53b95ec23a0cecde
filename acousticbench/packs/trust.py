"""The check before a run trusts a pack, for every benchmark: every audio path stays inside the pack, and every file
the run will use is what the pack pins and a clip of the format it promises (hashing only what changed since it last
matched). A mismatch refuses the run with one line naming the item."""
from __future__ import annotations

import os
from pathlib import Path

from acousticbench.core import clip_pins
from acousticbench.core.errors import ArchiveError
from acousticbench.packs import verified
from acousticbench.packs.audio_format import ClipFormat, clip_problems
from acousticbench.packs.files import Containment, Unreadable, file_sha256, sha256_many


def contained(where: Containment, rel: str, who: str) -> str:
    """The absolute path of `rel` under the pack, or ArchiveError naming `who` (a question or an episode)."""
    reason = where.outside_reason(rel)
    if reason:
        raise ArchiveError(f"{who}: audio path {rel!r} is {reason}; a pack may only name files inside its folder "
                           f"{where.root} (nothing outside it is read or sent).")
    return where.inside(rel)


def verified_digests(root: Path, paths: list[str], expected: dict[str, str | None],
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
    clip_pins.pin({p: want for p, want in expected.items() if want is not None and digests.get(p) == want})
    return digests, bad


def check_item_audio(paths_by_episode: dict[str, list[str]], base: Path, where: str,
                        pinned: dict[str, str] | None, hint: str, promised: ClipFormat | None = None) -> int:
    """Every clip an item (an AudioICL episode) names lies inside `base` and exists; where the pack's MANIFEST.json pins the
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
        digests, bad = verified_digests(base, list(files), {p: pinned.get(rel) for p, (_, rel) in files.items()},
                                         promised)
    for path, (episode_id, rel) in files.items():
        got = digests[path]
        if got is None:
            raise ArchiveError(f"episode {episode_id} in {where}: audio file {path} is missing or unreadable (paths "
                               f"are relative to --icl-base, the folder that holds data/); {hint}.")
        if pinned is not None and got != pinned.get(rel):
            what = "is not listed in" if rel not in pinned else "differs from"
            raise ArchiveError(f"episode {episode_id} in {where}: audio file {path} {what} the pack's MANIFEST.json "
                               f"(damaged or replaced); check it with `acousticbench pack verify` and {hint}.")
        if pinned is not None and path in bad:
            raise ArchiveError(f"episode {episode_id} in {where}: audio file {path} {bad[path]}; check it with "
                               f"`acousticbench pack verify` and {hint}.")
    return len(files)


def checked_sha256(path: Path, expected: str | None, what: str, hint: str) -> str:
    """The sha256 of a file the pack's manifest pins (an AudioICL meta file), refused when it does not match."""
    digest = file_sha256(str(path))
    if isinstance(digest, Unreadable) or (expected is not None and digest != expected):
        raise ArchiveError(f"{path} differs from the {what} MANIFEST.json pins (edited or damaged); check it with "
                           f"`acousticbench pack verify` and {hint}.")
    return digest
