"""The registry of a model's replicas on shared storage: one small JSON file per running server, written once its
/health answers and removed when it ends, under <folder>/<serve name>/ (docker_serve.sh --slurm writes them)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from acousticbench.core.reporter import warn

VARIABLE = "ACOUSTICBENCH_ENDPOINTS_FROM"
JOB_PREFIX = "acousticbench-"  # the SLURM job name of a model's replicas: acousticbench-<serve name>


@dataclass(frozen=True)
class Replica:
    """One server of a model as its registry file names it; `key` is the file's name without .json."""

    key: str
    url: str
    job: str | None = None
    node: str | None = None

    def describe(self) -> dict:
        return {"replica": self.key, "url": self.url, "job": self.job, "node": self.node}


def folder_of(registry: Path, serve_name: str) -> Path:
    return Path(registry) / serve_name


_SAID: set[Path] = set()  # registry files already named as unusable: each is said once


def read(registry: Path, serve_name: str) -> list[Replica]:
    """The replicas registered now, oldest file first; a file half-written or removed while read is skipped, and one
    whose URL no client can use is left out with one line naming it."""
    found = []
    for path in folder_of(registry, serve_name).glob("*.json"):
        try:
            data = json.loads(path.read_text())
            url, mtime = data["url"], path.stat().st_mtime
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            continue
        why = unusable(url)
        if why:
            if path not in _SAID:
                _SAID.add(path)
                warn(f"note: {path} names no URL a client can use ({why}): that replica is left out; fix or remove "
                     "the file.")
            continue
        found.append((mtime, Replica(path.stem, url.strip().rstrip("/"), data.get("job"), data.get("node"))))
    return [replica for _, replica in sorted(found, key=lambda pair: (pair[0], pair[1].key))]


def unusable(url: object) -> str | None:
    """Why `url` cannot be an endpoint (a port that is no number, an IPv6 literal left open, no host), or None."""
    if not isinstance(url, str):
        return f"its url is {json.dumps(url, allow_nan=True)[:40]}, not text"
    try:
        parts = urllib.parse.urlsplit(url.strip())
        parts.port  # a port that is no number, or out of range, raises here
    except ValueError as err:
        return f"{url[:80]!r}: {err}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url[:80]!r} is not an http:// or https:// URL with a host"
    return None


def jobs_ended(registry: Path, serve_name: str) -> str | None:
    """Why no replica of `serve_name` will register: SLURM queues and runs no job of its replicas any more, although
    one ran (its log is in the registry's logs/ folder, as sbatch writes it); names the newest job and the end of its
    log. None where SLURM is not here, a job is still queued or running, or none ran."""
    logs = sorted((folder_of(registry, serve_name) / "logs").glob("*.log"), key=_mtime)
    if not logs:
        return None
    try:
        out = subprocess.run(["squeue", "-h", "-n", JOB_PREFIX + serve_name, "-o", "%i"], capture_output=True,
                             text=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or out.stdout.strip():
        return None
    try:
        tail = [line.strip() for line in logs[-1].read_text(errors="replace").splitlines() if line.strip()][-3:]
    except OSError:
        tail = []
    said = f" ends: {' | '.join(tail)[-300:]!r}" if tail else " is empty"
    return (f"the SLURM job {logs[-1].stem} serving {serve_name} ended before its replica registered (squeue lists "
            f"no job {JOB_PREFIX}{serve_name}); its log {logs[-1]}{said}")


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def is_registered(registry: Path, serve_name: str, key: str) -> bool:
    return (folder_of(registry, serve_name) / f"{key}.json").exists()


def write(registry: Path, serve_name: str, key: str, url: str, job: str | None = None,
          node: str | None = None) -> Path:
    """Register a replica; atomic (a reader never sees half a file)."""
    folder = folder_of(registry, serve_name)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.json"
    entry = {"url": url, "job": job, "node": node or socket.gethostname(), "written_at": time.time()}
    partial = folder / f".{key}.json.{os.getpid()}"
    partial.write_text(json.dumps(entry, allow_nan=False) + "\n")
    os.replace(partial, path)
    return path


def remove(registry: Path, serve_name: str, key: str) -> None:
    (folder_of(registry, serve_name) / f"{key}.json").unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    """`python -m acousticbench.models.replicas add|remove DIR SERVE_NAME KEY [URL JOB]`: what a server's job runs."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) >= 5 and args[0] == "add":
        write(Path(args[1]), args[2], args[3], args[4], args[5] if len(args) > 5 else None)
    elif len(args) == 4 and args[0] == "remove":
        remove(Path(args[1]), args[2], args[3])
    else:
        print("usage: python -m acousticbench.models.replicas add DIR SERVE_NAME KEY URL [JOB] | "
              "remove DIR SERVE_NAME KEY", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
