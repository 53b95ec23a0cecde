"""Run folders: responses.jsonl (streamed, one record per line), config.json and metrics.json."""
from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from acousticbench.core.errors import UserError
from acousticbench.core.instants import instant, stamp_instant
from acousticbench.core.jsontext import json_text, model_line, parse_model
from acousticbench.core.readers import problem_of
from acousticbench.core.written_by import version_line
from acousticbench.core.records import RecordBase

RESPONSES, CONFIG, METRICS = "responses.jsonl", "config.json", "metrics.json"
FINAL_STATUSES = frozenset({"answered", "unparsed", "refused", "truncated"})


def claim_new(folder: Path, name: Callable[[str], str], make: Callable[[Path], Any], what: str) -> Path:
    """folder/name(stamp), made by `make` (mkdir, or an exclusive create) so that no other command holds it: two in the
    same second get <stamp>-1, -2 ...; a folder that cannot be written is one line naming --results-dir."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(1000):
            path = folder / name(stamp if n == 0 else f"{stamp}-{n}")
            try:
                make(path)
                return path
            except FileExistsError:
                continue
    except OSError as err:
        raise UserError(f"cannot write to results folder {folder} ({err.strerror}): choose another with --results-dir.") from None
    raise UserError(f"too many {what} in the same second under {folder}.")


def new_run_dir(results_dir: Path, prefix: str) -> Path:
    """Create results/<prefix>-<timestamp>/; a clear error if the results folder is not writable."""
    return claim_new(results_dir, lambda stamp: f"{prefix}-{stamp}", Path.mkdir, f"runs named {prefix}")


def latest_run_dir(results_dir: Path, prefix: str, belongs: Callable[[dict], bool] | None = None) -> Path | None:
    """The run folder of this prefix that started last (config.json's started_at, an instant: folder names hold
    local time, which sorts wrongly across time zones); with `belongs`, only folders whose config.json it accepts (a
    folder whose config.json is missing or unreadable is kept: whoever continues it must refuse it by name)."""
    if not results_dir.is_dir():
        return None
    pattern = re.compile(re.escape(prefix) + STAMP)
    runs = [path for path in results_dir.iterdir() if pattern.match(path.name) and path.is_dir()]
    if belongs is not None:
        runs = [path for path in runs if not config_or_empty(path) or belongs(config_or_empty(path))]
    return max(runs, key=started) if runs else None


STAMP = r"-(\d{8}-\d{6})(-(\d+))?$"  # what ends a run folder's name: its local time, and a number when two share it


def started(run_dir: Path) -> tuple[float, int]:
    """When a run started, for ordering runs: config.json's started_at as an instant, else the folder name's stamp
    (read as this machine's local time, as older harnesses wrote only that); then the number two in one second got."""
    found = re.search(STAMP, run_dir.name)
    at = instant(config_or_empty(run_dir).get("started_at"))
    if at is None:
        at = (stamp_instant(found.group(1)) if found else None) or 0.0
    return at, int(found.group(3) or 0) if found else 0


def config_or_empty(run_dir: Path) -> dict:
    """A run folder's config.json, or {} where it is missing or unreadable (for ordering and choosing runs only)."""
    try:
        config = json.loads((run_dir / CONFIG).read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return config if isinstance(config, dict) and isinstance(config.get("spec", {}), dict) else {}


def read_config(run_dir: Path, missing_ok: bool = False) -> dict:
    """A run folder's config.json; one line naming it when it cannot be read ({} for a missing one if allowed)."""
    path = run_dir / CONFIG
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))  # json.loads would take UTF-16 bytes: we never write it
    except FileNotFoundError:
        if missing_ok:
            return {}
        raise UserError(f"{path} not found: {run_dir} is not a run folder.") from None
    except (OSError, ValueError) as err:  # ValueError: not JSON, or not UTF-8
        raise UserError(f"cannot read {path} ({err}): restore it from a copy; the run's answers in {RESPONSES} are "
                        "not touched by this.") from None
    if not isinstance(data, dict):
        raise UserError(f"{path} is not a run's config (not a JSON object): restore it from a copy; the run's answers "
                        f"in {RESPONSES} are not touched by this.")
    return data


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically: a reader never sees a half-written file."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json_text(data, indent=2) + "\n", encoding="utf-8")  # a server's NaN as null: strict JSON
    except OSError as err:  # a full disk: name the file, which a failed write does not; the old one stands
        tmp.unlink(missing_ok=True)
        raise OSError(err.errno, err.strerror, str(path)) from None
    os.replace(tmp, path)


class ResponsesWriter:
    """Appends Records as they complete, one flushed line each, so a killed run loses nothing finished."""

    def __init__(self, path: Path):
        self.path = path
        # unbuffered: a line a full disk cuts is cut off again at once, never flushed later, so the file stays whole
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._size = os.fstat(self._fd).st_size
        self.lines: dict[str, str] = {}  # id -> the line written, so the final sorted rewrite serialises nothing again

    def append(self, record: RecordBase) -> None:
        line = model_line(record) + "\n"  # any text a server sent, invalid Unicode included
        data = line.encode("utf-8")
        try:
            done = 0
            while done < len(data):
                done += os.write(self._fd, data[done:])
        except OSError as err:  # name the file (a full disk otherwise reports none), and leave only whole lines
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                pass
            raise OSError(err.errno, err.strerror, str(self.path)) from None
        self._size += len(data)
        self.lines[record.id] = line

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


def read_records(path: Path, record_type: type[RecordBase], torn: list | None = None) -> list:
    """Read responses.jsonl; a half-written last line (from a killed run) is dropped (--resume asks it again), or
    collected in `torn` as a readers.TornLine for a caller that must not lose it; later duplicates win.
    `record_type`: the pydantic model of a line (its benchmark's record_type)."""
    return list({record.id: record for _, record in numbered_records(path, record_type, torn)}.values())


def numbered_records(path: Path, record_type: type[RecordBase], torn: list | None = None) -> list[tuple[int, Any]]:
    """Every record of responses.jsonl with its line number, duplicates included (read_records' rules otherwise)."""
    if not path.exists():
        return []
    try:
        with path.open("rb") as fh:  # line by line (split at b"\n" alone): never the whole file as one string
            return _numbered(path, fh, record_type, torn)
    except OSError as err:
        raise UserError(f"cannot read {path} ({err.strerror or err}).") from None


def _numbered(path: Path, fh: Any, record_type: type[RecordBase], torn: list | None) -> list[tuple[int, Any]]:
    found = []
    for lineno, line in enumerate(fh, 1):
        if not line.strip():
            continue
        try:
            found.append((lineno, parse_model(record_type, line)))
        except ValidationError as err:
            cut = any(e["type"] == "json_invalid" for e in err.errors())  # not even JSON: a kill's torn line
            written = None if cut else version_line(path.parent)  # another version's records: never taken for one
            if written:
                raise UserError(f"{path}:{lineno}: {problem_of(err)}: {written}.") from None
            if not line.endswith(b"\n"):  # only a last line with no newline after it may be torn by a kill
                if torn is not None:
                    from acousticbench.core.readers import TornLine, item_id_of

                    torn.append(TornLine(path, lineno, item_id_of(line)))
                continue
            raise UserError(f"{path}:{lineno}: not a valid {record_type.__name__} ({_problem(line, err)}); restore "
                            f"the file from {path.name}.orig if there is one, or rerun that run.") from None
    return found


def _problem(line: bytes, err: ValidationError) -> str:
    """What is wrong with a damaged line: bytes that are not UTF-8 text said as such (the file is not one we wrote)."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not UTF-8 text: byte {bad.start + 1} of the line is {line[bad.start]:#04x}"
    return problem_of(err)


def rewrite_sorted(path: Path, records: list[RecordBase], lines: dict[str, str] | None = None) -> None:
    """Replace responses.jsonl with one line per question, sorted by id (atomic); `lines` are records' lines
    already serialised (by the writer)."""
    lines = lines or {}
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.writelines(lines.get(r.id) or model_line(r) + "\n" for r in sorted(records, key=lambda r: r.id))
    os.replace(tmp, path)


class RunLock:
    """One writer per run folder (a run, --resume, rerun, rejudge): an exclusive flock on <run>/.lock, held while it
    writes; the system releases it when the process ends, however it ends. A reader asking whether a run is being
    written (being_written) holds a shared lock for an instant, so a writer tries for WAIT_S before it refuses."""

    NAME = ".lock"
    WAIT_S = 2.0

    def __init__(self, run_dir: Path, then: str = "before resuming this run"):
        import fcntl

        self.path = run_dir / self.NAME
        try:
            self._fh = self.path.open("a")  # never written: the lock is the flock, so the file stays as it was
        except OSError:  # a folder no one may write: the command's own first write names it
            self._fh = None
            return
        deadline = time.monotonic() + self.WAIT_S
        while True:
            try:
                fcntl.flock(self._fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    self._fh.close()
                    raise UserError(f"{run_dir} is being written by another process (a run, --resume, rerun or "
                                    f"rejudge of the same run): wait for it to finish, or stop it, {then}; nothing "
                                    "was changed.") from None
                time.sleep(0.05)

    def release(self) -> None:
        if self._fh is not None:
            self._fh.close()  # closing drops the lock


def being_written(run_dir: Path) -> bool:
    """Whether a command holds the run folder's lock now: a reader's question (the leaderboard, the report, promote),
    answered without waiting."""
    import fcntl

    try:
        fh = (run_dir / RunLock.NAME).open("rb")
    except OSError:
        return False
    with fh:  # closing drops the shared lock taken to ask
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
    return False
