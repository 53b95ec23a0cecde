"""Reading a pack's files safely and fast, shared by --verify-checksums and the pre-run check: is a path inside the
pack, and the sha256 of many files over a few threads."""
from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

WORKERS = min(4, os.cpu_count() or 1)  # hashing releases the GIL, so a few threads overlap reading and hashing
BATCH = 64  # files per pool task: scheduling one future costs about as much as hashing one 32 KB clip
_WHOLE_READ_LIMIT = 64 * 2**20  # larger files are hashed in chunks so that an odd pack cannot exhaust memory


@dataclass(frozen=True)
class Unreadable:
    """Why a file could not be hashed."""

    reason: str


def file_sha256(path: str) -> str | Unreadable:
    try:
        # Unbuffered: one whole read sized by fstat, no isatty or buffer copies per file.
        with open(path, "rb", buffering=0) as fh:
            if os.fstat(fh.fileno()).st_size <= _WHOLE_READ_LIMIT:
                return hashlib.sha256(fh.read()).hexdigest()
            digest = hashlib.sha256()
            while chunk := fh.read(2**20):
                digest.update(chunk)
            return digest.hexdigest()
    except FileNotFoundError:
        return Unreadable("file missing")
    except IsADirectoryError:
        return Unreadable("not a regular file (a folder)")
    except OSError as err:
        return Unreadable(f"unreadable ({err.strerror or err})")


def sha256_many(paths: list[str]) -> dict[str, str | Unreadable]:
    """file_sha256 of every path, in batches over a few threads."""
    batches = [paths[i : i + BATCH] for i in range(0, len(paths), BATCH)]
    with ThreadPoolExecutor(WORKERS) as pool:
        results = pool.map(lambda batch: [file_sha256(p) for p in batch], batches)
        return dict(zip(paths, (digest for batch in results for digest in batch)))


class Containment:
    """Whether relative paths name files inside one folder: no absolute path, no '..', no link leading out. Each
    folder is resolved once per check (a pack has a few), a file only when it is itself a link."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self._prefix = os.path.join(self.root, "")  # what os.path.join(root, rel) puts before a relative rel
        self._inside = os.path.realpath(self.root) + os.sep
        self._folders: dict[str, bool] = {}

    def outside_reason(self, rel: str) -> str | None:
        parts = rel.replace("\\", "/").split("/")
        if not rel or os.path.isabs(rel) or parts[0] == "" or ":" in parts[0]:
            return "an absolute path"
        if ".." in parts:
            return "a path with '..'"
        path = self._prefix + rel  # rel is relative here: the join without its checks (7,600 clips in a run)
        folder = os.path.dirname(path)
        if folder not in self._folders:
            self._folders[folder] = (os.path.realpath(folder) + os.sep).startswith(self._inside)
        if not self._folders[folder] or (os.path.islink(path) and not os.path.realpath(path).startswith(self._inside)):
            return "a link that leads outside the pack"
        return None

    def path(self, rel: str) -> str:
        return os.path.join(self.root, rel)

    def inside(self, rel: str) -> str:
        """path(rel) for a rel outside_reason passed (relative): without the join's checks, 7,600 times a run."""
        return self._prefix + rel
