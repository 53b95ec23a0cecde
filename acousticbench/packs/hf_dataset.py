"""A pack as a Hugging Face dataset folder, for every benchmark: Parquet shards whose schema carries datasets' features
(an Audio column of WAV bytes), a card whose YAML header lists one config per task, and an index from which the pack
is rebuilt byte for byte. Written with pyarrow alone: `datasets` is needed only to read it."""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acousticbench.core.errors import ArchiveError, UserError

INDEX = "acousticbench_export.json"  # what --import-dataset reads; a folder without it is not an export
FORMAT = "acousticbench-hf-export"
FORMAT_VERSION = 1
PACK_FILES = "pack"  # the pack's files no row carries (its manifests), verbatim, at their places in the pack
SHARD_BYTES = 256 * 2**20  # audio per Parquet shard: the hub's viewer and partial downloads work per shard
EXPORT_HINT = "export one with `acousticbench pack export DIR`"

# datasets' own feature dicts, written into every shard's schema (the "huggingface" key datasets reads back).
# "Sequence" rather than "List": datasets 3 knows only the former, and 4-5 read it as a List.
STRING = {"dtype": "string", "_type": "Value"}
INT = {"dtype": "int64", "_type": "Value"}
AUDIO = {"_type": "Audio"}  # one clip; decoding is left to the reader (torchcodec)
AUDIO_LIST = {"feature": AUDIO, "_type": "Sequence"}
STRING_LIST = {"feature": STRING, "_type": "Sequence"}


@dataclass(frozen=True)
class SplitFiles:
    """One split of one config: its shards (relative to the export) and how many rows they hold."""

    files: list[str]
    rows: int


@dataclass
class Part:
    """What one benchmark's pack contributed to an export (one entry of the index)."""

    benchmark: str  # the seam's name of the benchmark, which --import-dataset hands the part back to
    pack: str  # the manifest's own name of the pack
    version: str
    license: str  # a hub license id ("unknown" where the pack declares none)
    manifest: str  # the verbatim MANIFEST.json, relative to the export
    manifest_sha256: str
    card: str  # its section of README.md
    configs: dict[str, dict[str, SplitFiles]] = field(default_factory=dict)  # task -> split -> shards


def refuse_altered(export: Path, what: str, failure: str | None) -> None:
    """A pack rebuilt from an export that fails verification (`failure`: its first line) came from an altered export:
    one line, before anything is moved into place."""
    if failure is not None:
        raise ArchiveError(f"the {what} rebuilt from {export} fails verification ({failure}): the export was altered; "
                           "export it again.")


def refuse_non_empty(folder: Path, flag: str, what: str) -> None:
    """A folder that holds anything is never written into: one line, nothing touched."""
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UserError(f"{flag} {folder} is not an empty folder: give a new or empty one for the {what} "
                        "(nothing was written).")


def _arrow_type(feature: dict):
    """The Arrow type datasets stores a feature as (an Audio clip is a struct of its bytes and its path)."""
    import pyarrow as pa

    if feature == AUDIO:
        return pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    if feature["_type"] == "Sequence":
        return pa.list_(_arrow_type(feature["feature"]))
    return {"string": pa.string(), "int64": pa.int64()}[feature["dtype"]]


def _audio_bytes(row: dict[str, Any], features: dict[str, dict]) -> int:
    clips = [c for name, f in features.items() for c in ([row[name]] if f == AUDIO else row[name] if f == AUDIO_LIST
                                                           else [])]
    return sum(len(clip["bytes"]) for clip in clips)


def _schema(features: dict[str, dict]):
    import pyarrow as pa

    columns = [(name, _arrow_type(f)) for name, f in features.items()]
    meta = {"huggingface": json.dumps({"info": {"features": features}}, allow_nan=False)}
    return pa.schema(columns, metadata=meta)


def write_split(out: Path, config: str, split: str, rows: Iterable[dict[str, Any]],
                features: dict[str, dict]) -> SplitFiles:
    """Rows (an audio column as {"bytes", "path"} or a list of them) into <config>/<split>-NNNNN-of-MMMMM.parquet, the hub's
    shard names, cut every SHARD_BYTES of audio."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _schema(features)
    folder = out / config
    folder.mkdir(parents=True, exist_ok=True)
    shards: list[Path] = []
    batch: list[dict] = []
    size = n = 0

    def flush() -> None:
        path = folder / f".{split}-{len(shards):05d}.parquet"
        pq.write_table(pa.Table.from_pylist(batch, schema=schema), path)
        shards.append(path)
        batch.clear()

    for row in rows:
        batch.append(row)
        n += 1
        size += _audio_bytes(row, features)
        if size >= SHARD_BYTES:
            flush()
            size = 0
    if batch or not shards:
        flush()
    names = []
    for i, path in enumerate(shards):
        name = f"{split}-{i:05d}-of-{len(shards):05d}.parquet"
        os.replace(path, folder / name)
        names.append(f"{config}/{name}")
    return SplitFiles(names, n)


def read_rows(export: Path, split: SplitFiles) -> Iterator[dict[str, Any]]:
    """Every row of a split's shards, in order; a missing or unreadable shard is one line naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 0
    for rel in split.files:
        path = Path(export) / rel
        if not path.is_file():
            raise ArchiveError(f"{path} is missing: the export at {export} is incomplete; {EXPORT_HINT} again.")
        try:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=64):
                for row in batch.to_pylist():
                    n += 1
                    yield row
        except (pa.ArrowException, OSError) as err:
            raise ArchiveError(f"{path} is not a readable Parquet file ({err}): the export was altered; "
                               f"{EXPORT_HINT} again.") from None
    if n != split.rows:
        raise ArchiveError(f"{Path(export) / split.files[0]}: the split holds {n} rows, the export's {INDEX} says "
                           f"{split.rows}: the export was altered; {EXPORT_HINT} again.")


def write_index_and_card(out: Path, parts: list[Part], harness_version: str) -> None:
    index = {"format": FORMAT, "format_version": FORMAT_VERSION, "harness_version": harness_version,
             "parts": [_part_dict(p) for p in parts]}
    (out / INDEX).write_text(json.dumps(index, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    (out / "README.md").write_text(card(parts), encoding="utf-8")


def _part_dict(part: Part) -> dict[str, Any]:
    data = {k: v for k, v in vars(part).items() if k not in ("configs", "card")}
    data["configs"] = {c: {s: vars(f) for s, f in splits.items()} for c, splits in part.configs.items()}
    return data


def card(parts: list[Part]) -> str:
    """README.md: the hub's YAML header (license, one config per task with data_files per split), then each part."""
    licenses = sorted({p.license for p in parts})
    lines = ["---", f"license: {licenses[0] if len(licenses) == 1 else 'other'}", "configs:"]
    for part in parts:
        for config, splits in part.configs.items():
            lines += [f"- config_name: {config}", "  data_files:"]
            lines += [f"  - split: {s}\n    path: {json.dumps(f'{config}/{s}-*.parquet')}" for s in splits]
    lines += ["---", ""]
    return "\n".join(lines) + "\n\n".join(p.card for p in parts)


def read_index(export: Path) -> list[Part]:
    """The parts of an export; a folder that is not one, or an index that was edited, is one line."""
    path = Path(export) / INDEX
    if not Path(export).is_dir():
        raise UserError(f"`acousticbench pack import {export}`: no such folder; {EXPORT_HINT}.")
    if not path.is_file():
        raise ArchiveError(f"{export} is not a dataset export of this harness ({INDEX} not found): {EXPORT_HINT}.")
    try:
        index = json.loads(path.read_bytes())
        if index["format"] != FORMAT or index["format_version"] != FORMAT_VERSION:
            raise ArchiveError(f"{path} is format {index['format']} {index['format_version']}, this harness reads "
                               f"{FORMAT} {FORMAT_VERSION}: export it again with this harness.")
        return [Part(**{**p, "card": "", "configs": {c: {s: SplitFiles(**f) for s, f in splits.items()}
                                                      for c, splits in p["configs"].items()}})
                for p in index["parts"]]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, AttributeError):
        raise ArchiveError(f"{path} is not an export index (damaged or edited): {EXPORT_HINT} again.") from None


def verbatim(export: Path, part: Part) -> bytes:
    """The part's MANIFEST.json as exported, checked against the hash the index pins."""
    import hashlib

    path = Path(export) / part.manifest
    if not path.is_file():
        raise ArchiveError(f"{path} is missing: the export at {export} is incomplete; {EXPORT_HINT} again.")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != part.manifest_sha256:
        raise ArchiveError(f"{path}: sha256 mismatch with the export's {INDEX} (the manifest was altered); "
                           f"{EXPORT_HINT} again.")
    return data
