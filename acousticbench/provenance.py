"""Provenance for config.json: harness version and git state, package versions, archive and prompt hashes."""
from __future__ import annotations

import hashlib
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from acousticbench import __version__

_PACKAGES = ("numpy", "pydantic", "soundfile", "soxr", "openai", "google-genai", "httpx")


def git_state() -> dict[str, object]:
    """Commit and dirty flag of the harness checkout; nulls when not run from a git checkout."""
    repo = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return {"commit": None, "dirty": None}
    if commit.returncode != 0:
        return {"commit": None, "dirty": None}
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def prompt_hash(prompts: list[str]) -> str:
    """One hash over the distinct prompt texts a run sends, so a template change is visible."""
    digest = hashlib.sha256()
    for text in sorted(set(prompts)):
        digest.update(text.encode("utf-8") + b"\0")
    return digest.hexdigest()


def harness() -> dict[str, object]:
    return {"version": __version__, **git_state(), "python": platform.python_version(), "packages": package_versions()}
