"""The AudioICL pack on disk: where it lies in an archive, its MANIFEST.json, and checksum verification."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acousticbench.packs.audio_format import ClipFormat, clip_problems
from acousticbench.packs.files import Unreadable, sha256_many
from acousticbench.core.errors import ArchiveError

FOLDER = "audioicl"  # <archive>/audioicl/{MANIFEST.json, meta/meta_k{k}.jsonl, data/...}
MANIFEST = "MANIFEST.json"
OPEN_BENCHMARK = "AudioICL-open"
OPEN_VERSION = "1.1"  # 1.1: spoken digits read from shipped files (1.0 synthesised them at build time)
HINT = "rebuild it with `acousticbench build-audioicl` (after removing the folder)"
# MANIFEST.json of the full open pack as this harness builds it from the spoken digits shipped in the package; it
# lists the sha256 of every meta file and clip, so this one value pins every byte. No TTS runs, so it holds anywhere.
OPEN_MANIFEST_SHA256 = "c65eeb9c1d0c96ec148b4638a4c5a531257083d77dc9d1e4cbda1b23c3ea518d"


def pack_root(archive: Path) -> Path:
    return Path(archive) / FOLDER


def default_meta(archive: Path) -> Path:
    return pack_root(archive) / "meta"


def default_base(archive: Path) -> Path:
    """The folder the episodes' audio paths ('data/...') are relative to."""
    return pack_root(archive)


def load_manifest(root: Path) -> dict[str, Any]:
    path = Path(root) / MANIFEST
    if not path.is_file():
        refuse_export(Path(root).parent)
        raise ArchiveError(f"no AudioICL pack at {root} ({MANIFEST} not found): build it with "
                           "`acousticbench build-audioicl`.")
    try:
        return json.loads(path.read_bytes())
    except json.JSONDecodeError as err:
        raise ArchiveError(f"{path} is not valid JSON (line {err.lineno}): {HINT}.") from None


def refuse_export(archive: Path) -> None:
    """An --archive that is a dataset export rather than a pack is one line saying how to rebuild the pack."""
    if (Path(archive) / "acousticbench_export.json").is_file():  # packs/hf_dataset.py's INDEX
        raise ArchiveError(f"{archive} is a dataset export, not a pack: rebuild the pack from it with "
                           f"`acousticbench pack import {archive} --archive PACK`, then pass --archive PACK.")


def manifest_sha256(root: Path) -> str | None:
    path = Path(root) / MANIFEST
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def clip_format(manifest: dict[str, Any]) -> ClipFormat:
    """What every clip of the pack must be: its manifest's "audio", else the open pack's 16 kHz PCM16 mono."""
    audio = manifest.get("audio") or {}
    return ClipFormat(audio.get("sample_rate", 16_000), audio.get("sample_format", "PCM_16"), audio.get("channels", 1))


@dataclass(frozen=True)
class ICLVerifyReport:
    """The outcome of verify_audioicl: what was checked and one line per failing file."""

    n_episodes: int
    n_files: int
    failures: list[str]

    @property
    def ok(self) -> bool:
        return not self.failures

    def lines(self) -> list[str]:
        if self.ok:
            return [f"All {self.n_episodes} AudioICL episodes passed checksum verification "
                    f"({self.n_files} files: meta_k1..5.jsonl and every clip)."]
        return [*self.failures, f"{len(self.failures)} of {self.n_files} AudioICL files failed checksum verification.",
                f"To fix: {HINT}."]


def verify_audioicl(root: Path) -> ICLVerifyReport:
    """Recompute the sha256 of every file MANIFEST.json lists; also flag clips the episodes use but it does not list."""
    root = Path(root)
    manifest = load_manifest(root)
    listed: dict[str, str] = manifest.get("sha256", {})
    actual = sha256_many([str(root / rel) for rel in listed])
    failures = []
    for rel, expected in listed.items():
        got = actual[str(root / rel)]
        if isinstance(got, Unreadable):
            failures.append(f"{rel}: {got.reason}")
        elif got != expected:
            failures.append(f"{rel}: sha256 mismatch (expected {expected[:8]}…, got {got[:8]}…)")
    clips = {str(root / rel): clip_format(manifest) for rel in listed if rel.endswith(".wav")
             and isinstance(actual[str(root / rel)], str)}
    failures += [f"{Path(path).relative_to(root)}: {why}" for path, why in sorted(clip_problems(clips).items())]
    failures += _unlisted(root, listed)
    return ICLVerifyReport(sum(manifest.get("tasks", {}).values()), len(listed), failures)


def _unlisted(root: Path, listed: dict[str, str]) -> list[str]:
    """Audio the meta files point to that the manifest does not pin (an edited meta file, or a foreign one)."""
    unlisted: dict[str, None] = {}
    for meta in sorted((root / "meta").glob("meta_k*.jsonl")):
        for line in meta.read_text(encoding="utf-8").splitlines():
            try:
                episode = json.loads(line)
                shots = [*episode["demos"], episode["query"]]
                paths = [c["audio_path"] for s in shots for c in s.get("clips", [s])]
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                continue  # a malformed line already fails its meta file's sha256
            unlisted.update(dict.fromkeys(p for p in paths if p not in listed))
    return [f"{p}: used by the episodes but not listed in {MANIFEST}" for p in unlisted]


def pinned_note(root: Path) -> str | None:
    """A one-line note when an open AudioICL pack differs from the published build (and why, if its digits differ)."""
    from acousticbench.benchmarks.audioicl.build.speech import digits_sha256

    manifest = load_manifest(root)
    if manifest.get("benchmark") != OPEN_BENCHMARK or manifest_sha256(root) == OPEN_MANIFEST_SHA256:
        return None
    why = ("it was built with other spoken digits (an older harness synthesised them with espeak-ng at build time)"
           if manifest.get("spoken_digits") != digits_sha256()
           else f"it has {manifest.get('counts', {}).get('episodes')} episodes or another harness version built it")
    return (f"Note: this {OPEN_BENCHMARK} pack differs from the published one (MANIFEST.json sha256 "
            f"{manifest_sha256(root)[:12]}, published {OPEN_MANIFEST_SHA256[:12]}): {why}; results may not compare.")
