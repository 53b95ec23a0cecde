"""Write a pack as a deterministic Zip64 archive, and extract one without trusting what its members claim."""
from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import struct
import zipfile
import zlib
from pathlib import Path

from acousticbench.packs.lines import MANIFEST
from acousticbench.packs.staging import staged_folder
from acousticbench.core.errors import ArchiveError, UnsafeArchiveError, UserError

MAX_MEMBERS = 200_000
MAX_TOTAL_BYTES = 20 * 2**30
MAX_RATIO = 200
# Small members may compress far better than 200:1 without harm; a bomb has to be big to hurt.
RATIO_MIN_BYTES = 2**20
_CHUNK = 2**20
_EPOCH = (1980, 1, 1, 0, 0, 0)
_FILE_ATTR = (stat.S_IFREG | 0o644) << 16
_UNIX = 3


def write_zip(root: Path, zip_path: Path) -> None:
    """Zip the pack at `root` (members relative to it, e.g. `MANIFEST.json`); the same pack gives the same bytes."""
    if not (Path(root) / MANIFEST).is_file():  # refuse early if root is not a pack
        raise ArchiveError(f"no benchmark pack at {root} ({MANIFEST} not found): build one with `acousticbench pack "
                           "build` or pass --archive DIR.")
    files = _pack_files(root, skip=zip_path)
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    partial = zip_path.with_name(f".{zip_path.name}.partial-{secrets.token_hex(4)}")
    try:
        with zipfile.ZipFile(partial, "w", allowZip64=True) as zf:
            for rel in files:
                _add_member(zf, root / rel, rel)
        _add_zip64_end_records(partial)
        os.replace(partial, zip_path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _pack_files(root: Path, skip: Path) -> list[str]:
    """Every file under root as a relative posix path, sorted, less the zip being written (it may sit inside root)."""
    skip, root_abs = skip.resolve(), root.resolve()
    own = skip.relative_to(root_abs).as_posix() if skip.is_relative_to(root_abs) else None
    files = []
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            if Path(folder, name).is_symlink():
                raise ArchiveError(f"{Path(folder, name)} is a link; a pack holds regular files only: rebuild it.")
        files += [Path(folder, name).relative_to(root).as_posix() for name in names]
    partial = f".{skip.name}.partial-"
    return sorted(f for f in files if f != own and not (own and f.rpartition("/")[2].startswith(partial)))


def _add_member(zf: zipfile.ZipFile, path: Path, rel: str) -> None:
    info = zipfile.ZipInfo(rel, date_time=_EPOCH)
    info.create_system, info.external_attr = _UNIX, _FILE_ATTR
    # WAV samples do not compress; storing them keeps extraction a plain copy.
    info.compress_type = zipfile.ZIP_STORED if rel.endswith(".wav") else zipfile.ZIP_DEFLATED
    with path.open("rb") as src, zf.open(info, "w", force_zip64=True) as dst:
        shutil.copyfileobj(src, dst, _CHUNK)


def _add_zip64_end_records(path: Path) -> None:
    """Move the end of central directory to its Zip64 form, as the published archive has it.

    zipfile only writes the Zip64 end records past 65,535 members or 4 GiB; the layout is
    fixed by the ZIP spec (APPNOTE 4.3.14-4.3.16), so the records are appended here.
    """
    with path.open("r+b") as fh:
        end = fh.seek(-22, os.SEEK_END)
        sig, _, _, _, count, cd_size, cd_offset, comment = struct.unpack("<4s4H2LH", fh.read(22))
        if sig != b"PK\x05\x06" or comment or count == 0xFFFF or end != cd_offset + cd_size:
            return  # already Zip64 (huge pack), or a layout this function does not rewrite
        fh.seek(end)
        fh.write(struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, cd_size, cd_offset))
        fh.write(struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1))
        fh.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))


def safe_extract(zip_path: Path, target: Path) -> int:
    """Extract a pack zip into `target` (new or empty folder); returns the number of files.

    Every member is vetted before anything is written; the files go to a hidden sibling
    folder that is renamed to `target` only when all of them are out, so a failure leaves nothing.
    """
    target = Path(os.path.abspath(target))
    _check_target(target)
    with _open_zip(zip_path) as zf:
        members = _vet_members(zf, zip_path)
        prefix = _pack_prefix(members, zip_path)
        with staged_folder(target, "extracting") as staging:  # _check_target let through only an empty folder
            count = _write_members(zf, members, prefix, staging, zip_path)
    return count


def _check_target(target: Path) -> None:
    if (target / MANIFEST).exists():
        raise UserError(f"{target} already holds a benchmark pack ({MANIFEST} exists): choose another "
                        "--archive, or move that pack away first; nothing was written.")
    if target.is_symlink() or (target.exists() and (not target.is_dir() or any(target.iterdir()))):
        raise UserError(f"{target} exists and is not an empty folder: choose another --archive, or move "
                        "its files away first; nothing was written.")


def _open_zip(zip_path: Path) -> zipfile.ZipFile:
    if not zip_path.is_file():
        raise ArchiveError(f"{zip_path} not found: check the path of the zip.")
    try:
        return zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as err:
        raise ArchiveError(f"{zip_path} is not a readable zip archive ({err}): download it again.") from None


def _refuse(zip_path: Path, member: str, reason: str) -> UnsafeArchiveError:
    return UnsafeArchiveError(f"refusing to extract {zip_path}: member {member!r} {reason}; nothing was written.")


def _vet_members(zf: zipfile.ZipFile, zip_path: Path) -> list[tuple[zipfile.ZipInfo, tuple[str, ...]]]:
    """Each member with its path parts, or UnsafeArchiveError for the first one that must not be extracted."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise UnsafeArchiveError(f"refusing to extract {zip_path}: {len(infos)} members (limit {MAX_MEMBERS}); nothing was written.")
    members, seen, total = [], set(), 0
    for info in infos:
        parts = _member_parts(info.filename)
        reason = parts if isinstance(parts, str) else _member_problem(info)
        if not reason and "/".join(parts) in seen:
            reason = "is a duplicate name"
        total += info.file_size
        if not reason and total > MAX_TOTAL_BYTES:
            reason = f"takes the total uncompressed size past {MAX_TOTAL_BYTES // 2**30} GiB"
        if reason:
            raise _refuse(zip_path, info.filename, reason)
        seen.add("/".join(parts))
        members.append((info, parts))
    files = {"/".join(parts) for info, parts in members if not info.is_dir()}
    for info, parts in members:
        clash = next(("/".join(parts[:i]) for i in range(1, len(parts)) if "/".join(parts[:i]) in files), None)
        if clash:
            raise _refuse(zip_path, info.filename, f"lies under {clash!r}, which is a file")
    return members


def _member_parts(name: str) -> tuple[str, ...] | str:
    """The member's path parts, or why its name is unsafe."""
    if "\\" in name:
        return "contains a backslash (a Windows path that could escape the target folder)"
    if name.startswith("/"):
        return "is an absolute path"
    if re.match(r"[A-Za-z]:", name):
        return "starts with a drive letter"
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    if ".." in parts:
        return "has a '..' component that would escape the target folder"
    return parts or "has an empty name"


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        return "is a symbolic link"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return f"is not a regular file or folder (file type {kind:#o})"
    if info.flag_bits & 0x1:
        return "is encrypted"
    if info.file_size > RATIO_MIN_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        ratio = info.file_size / max(info.compress_size, 1)
        return f"expands {ratio:.0f}:1 to {info.file_size} bytes (limit {MAX_RATIO}:1; a zip bomb?)"
    return None


def _pack_prefix(members: list[tuple[zipfile.ZipInfo, tuple[str, ...]]], zip_path: Path) -> tuple[str, ...]:
    """() when MANIFEST.json is at the top, (folder,) when the whole pack sits in one top folder."""
    files = {parts for info, parts in members if not info.is_dir()}
    if (MANIFEST,) in files:
        return ()
    tops = {parts[0] for _, parts in members}
    if len(tops) == 1 and (next(iter(tops)), MANIFEST) in files:
        return (next(iter(tops)),)
    raise ArchiveError(f"{zip_path} is not a benchmark pack: no {MANIFEST} at its top or in a single top folder.")


def _write_members(zf: zipfile.ZipFile, members: list[tuple[zipfile.ZipInfo, tuple[str, ...]]], prefix: tuple[str, ...],
                   staging: Path, zip_path: Path) -> int:
    count = 0
    for info, parts in members:
        rel = parts[len(prefix) :]
        if not rel:
            continue  # the top folder itself
        dest = staging.joinpath(*rel)
        if info.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        _copy_member(zf, info, dest, zip_path)
        count += 1
    return count


def _copy_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, zip_path: Path) -> None:
    """Stream one member, counting bytes, so a header that understates the size cannot fill the disk."""
    written = 0
    try:
        with zf.open(info) as src, dest.open("xb") as out:
            while chunk := src.read(_CHUNK):
                written += len(chunk)
                if written > info.file_size:
                    raise _refuse(zip_path, info.filename, f"holds more than the {info.file_size} bytes its header declares")
                out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as err:
        raise ArchiveError(f"{zip_path}: member {info.filename!r} is corrupt ({err}): download the archive again.") from None
    except OSError as err:
        raise ArchiveError(f"extracting {info.filename!r} from {zip_path} failed ({err.strerror or err}).") from None
