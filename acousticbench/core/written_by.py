"""Which version of the harness wrote a run folder (config.json's `harness.version`), and the one line a tool says
when it cannot read a run another version wrote: the version, and to update (or use that version), never to delete."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from acousticbench.core.version import __version__


def version_of(config: dict[str, Any]) -> str | None:
    harness = config.get("harness") if isinstance(config, dict) else None
    version = harness.get("version") if isinstance(harness, dict) else None
    return version if isinstance(version, str) and version else None


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version.split("+")[0])[:3])


def is_newer(version: str) -> bool:
    """Whether `version` is later than this harness's (by its numbers; a development suffix does not count)."""
    return _numbers(version) > _numbers(__version__)


def other_version(config: dict[str, Any]) -> str | None:
    """The harness version that wrote this config.json, when it is not this one."""
    version = version_of(config)
    return version if version is not None and _numbers(version) != _numbers(__version__) else None


def run_config(run_dir: Path) -> dict[str, Any]:
    """A run folder's config.json, or {} when there is none or it cannot be read (the caller's own error stands)."""
    try:
        data = json.loads((Path(run_dir) / "config.json").read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def version_line(run_dir: Path, config: dict[str, Any] | None = None) -> str | None:
    """Why this harness cannot read a run folder that another version wrote, and what to do; None when the same
    version wrote it (or none is recorded): then the file itself is at fault."""
    version = other_version(run_config(run_dir) if config is None else config)
    if version is None:
        return None
    if is_newer(version):
        fix = (f"update acousticbench to {version} or later (git pull, then pip install -e .) to read it")
    else:
        fix = f"read it with acousticbench {version}, the version that wrote it"
    return (f"{run_dir} was written by acousticbench {version} and this is {__version__}, which cannot read it: "
            f"{fix}; its files are good and were left as they are")
