"""The judge cache on disk: one append-only JSONL file of verdicts, indexed in memory by a sha256 key."""
from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError
from acousticbench.core.jsontext import json_text
from acousticbench.core.environment import CACHE_DIR, cache_dir

FILE_NAME = "verdicts.jsonl"


def default_dir() -> Path:
    """$ACOUSTICBENCH_CACHE_DIR/judge, else ~/.cache/acousticbench/benchmarks/acoustic/judge."""
    return cache_dir() / "judge"


def cache_key(model: str, prompt_version: str, question: str, response: str, endpoint: str = "") -> str:
    """What a verdict depends on: the judge model and where it is served (the same name on another server may be
    another model), the judge prompt version, the question and the response."""
    parts = [model, prompt_version, question, response] + ([endpoint] if endpoint else [])
    material = json.dumps(parts, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()  # a reply with invalid Unicode


class JudgeCache:
    """Verdicts by key. Loaded once; each new verdict is one appended line, written in a single call, so a crash
    leaves at most a torn last line, which is ignored on the next load."""

    def __init__(self, folder: Path | None = None):
        self.path = (folder or default_dir()) / FILE_NAME
        self._index: dict[str, dict[str, Any]] | None = None
        self._lock = threading.Lock()
        self._needs_newline = False

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._index is not None:
            return self._index
        index: dict[str, dict[str, Any]] = {}
        if self.path.is_file():
            data = self.path.read_bytes()
            self._needs_newline = bool(data) and not data.endswith(b"\n")
            lines = data.decode("utf-8", errors="replace").split("\n")  # not splitlines: U+2028 in a reason
            damaged = 0
            for lineno, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    if not isinstance(entry["key"], str) or not isinstance(entry["verdict"], dict):
                        raise TypeError("not a verdict")
                    index[entry["key"]] = entry["verdict"]
                except (ValueError, KeyError, TypeError):
                    # a torn or foreign line: never fail a run over the cache; a torn last line is a crash's mark
                    damaged += lineno < len(lines) or not self._needs_newline
            if damaged:
                from acousticbench.core.readers import note_damaged_cache

                note_damaged_cache(self.path, f"{damaged} damaged line{'s' if damaged > 1 else ''}",
                                   "their answers are judged again")
        self._index = index
        return index

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            return self._load().get(key)

    def put(self, key: str, verdict: dict[str, Any]) -> None:
        line = json_text({"key": key, "verdict": verdict}, separators=(",", ":")) + "\n"
        with self._lock:
            index = self._load()
            if key in index:
                return
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    os.write(fd, (("\n" if self._needs_newline else "") + line).encode("utf-8"))
                finally:
                    os.close(fd)
            except OSError as err:
                raise UserError(f"cannot write the judge cache {self.path} ({err.strerror}); "
                                 f"set {CACHE_DIR} to a writable folder.") from None
            self._needs_newline = False
            index[key] = verdict

    def __len__(self) -> int:
        with self._lock:
            return len(self._load())
