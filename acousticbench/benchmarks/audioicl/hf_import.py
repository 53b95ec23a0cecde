"""The AudioICL pack rebuilt from its Hugging Face dataset configs (audioicl/hf.py writes them), every file checked
against the manifest's sha256 before the pack is moved into place."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from acousticbench.benchmarks.audioicl.hf import (
    CLIPS, CLIPS_SPLIT, META, episode_row, meta_files, rebuilt, split_name,
)
from acousticbench.benchmarks.audioicl.pack import FOLDER, MANIFEST
from acousticbench.core.errors import ArchiveError, UserError
from acousticbench.packs.files import Containment
from acousticbench.packs.hf_dataset import EXPORT_HINT, PACK_FILES, Part, read_rows, verbatim


def _altered(export: Path, what: str) -> ArchiveError:
    return ArchiveError(f"{export}: {what}: the export was altered; {EXPORT_HINT} again.")


def import_pack(export: Path, part: Part, archive: Path) -> int:
    """Rebuild <archive>/audioicl (archive: a staging folder) from the export; returns the number of episodes."""
    data = verbatim(export, part)
    try:
        manifest = json.loads(data)
        listed: dict[str, str] = dict(manifest["sha256"])
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError):
        raise _altered(export, f"{part.manifest} is not an AudioICL manifest") from None
    absent = [t for t in manifest.get("tasks", {}) if t not in part.configs]
    if absent or CLIPS not in part.configs:
        raise UserError(f"{export} holds {len(part.configs) - (CLIPS in part.configs)} of the AudioICL pack's "
                        f"{len(manifest.get('tasks', {}))} tasks (it lacks {', '.join(absent) or CLIPS}): only an "
                        "export of every task rebuilds a pack that verifies; export again without --task.")
    root = Path(archive) / FOLDER
    root.mkdir(parents=True)
    (root / MANIFEST).write_bytes(data)
    written = _write_clips(export, part, root, listed)
    for rel in listed:  # what no row carries travels verbatim under pack/
        if not rel.endswith(".wav") and not META.match(rel):
            _write_checked(export, root, rel, _kept_bytes(export, rel), listed)
            written.add(rel)
    n = _write_meta(export, part, root, manifest)
    lacking = [rel for rel in listed if rel not in written and not META.match(rel)]
    if lacking:
        raise _altered(export, f"{len(lacking)} files of the pack are in no row (first {lacking[0]})")
    return n


def _kept_bytes(export: Path, rel: str) -> bytes:
    path = Path(export) / PACK_FILES / FOLDER / rel
    if Containment(str(Path(export) / PACK_FILES / FOLDER)).outside_reason(rel):  # never read outside the export
        raise _altered(export, f"file {rel} points outside the pack")
    if not path.is_file():
        raise ArchiveError(f"{path} is missing: the export at {export} is incomplete; {EXPORT_HINT} again.")
    return path.read_bytes()


def _write_checked(export: Path, root: Path, rel: str, data: bytes, listed: dict[str, str]) -> None:
    """One file of the pack written at its place, once its path stays inside and its bytes match the manifest."""
    if Containment(str(root)).outside_reason(rel):  # never written outside the pack, whatever a row says
        raise _altered(export, f"file {rel} points outside the pack")
    if rel not in listed:
        raise _altered(export, f"clip {rel} is not in the pack's {MANIFEST}")
    if hashlib.sha256(data).hexdigest() != listed[rel]:
        raise _altered(export, f"{rel}: sha256 mismatch")
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def _write_clips(export: Path, part: Part, root: Path, listed: dict[str, str]) -> set[str]:
    split = part.configs[CLIPS].get(CLIPS_SPLIT)
    if split is None:
        raise _altered(export, f"its {CLIPS} config has no {CLIPS_SPLIT} split")
    written: set[str] = set()
    for row in read_rows(export, split):
        rel = row.get("path")
        clip = row.get("audio") or {}
        if not isinstance(rel, str) or clip.get("path") != rel or not isinstance(clip.get("bytes"), bytes):
            raise _altered(export, f"a {CLIPS} row ({rel!r}) does not hold its clip's path and bytes")
        if rel in written:
            raise _altered(export, f"clip {rel} appears twice in {CLIPS}")
        _write_checked(export, root, rel, clip["bytes"], listed)
        written.add(rel)
    return written


def _write_meta(export: Path, part: Part, root: Path, manifest: dict) -> int:
    """meta_k{k}.jsonl from the episode rows of every task config, each row checked against its verbatim line."""
    metas = meta_files(manifest)
    lines: dict[int, dict[int, str]] = {k: {} for k in metas}
    for task, splits in part.configs.items():
        if task == CLIPS:
            continue
        for name, split in splits.items():
            k = next((k for k in metas if split_name(k) == name), None)
            if k is None:
                raise _altered(export, f"config {task} has a split {name} that names no meta file of the pack")
            for row in read_rows(export, split):
                _check_row(export, task, k, row)
                if row["line"] in lines[k]:
                    raise _altered(export, f"two rows claim line {row['line']} of meta_k{k}.jsonl")
                lines[k][row["line"]] = row["episode"]
    for k, rel in metas.items():
        text = rebuilt([lines[k][i] for i in sorted(lines[k])])
        if sorted(lines[k]) != list(range(len(lines[k]))) or hashlib.sha256(text).hexdigest() != manifest["sha256"][rel]:
            raise _altered(export, f"the episodes of {rel} do not match the manifest's sha256 (rows were added, "
                                   "removed or edited)")
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text)
    return sum(manifest.get("tasks", {}).values())


def _check_row(export: Path, task: str, k: int, row: dict) -> None:
    """Every column of an episode row must be what its verbatim line gives, in its own config."""
    if not isinstance(row.get("episode"), str) or not isinstance(row.get("line"), int):
        raise _altered(export, f"an episode row of {task} ({row.get('id')!r}) holds no episode line")
    try:
        shown = episode_row(row["episode"], k, row["line"], f"{task} row {row.get('id')}")
    except ArchiveError as err:
        raise _altered(export, str(err).split(";")[0]) from None
    changed = [name for name, value in shown.items() if row.get(name) != value]
    if shown["task"] != task:
        changed.insert(0, "task")
    if changed:
        raise _altered(export, f"{shown['id']}'s column {changed[0]} in {task} differs from its episode line")
