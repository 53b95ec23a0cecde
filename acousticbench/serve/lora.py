"""LoRA adapters merged into their base model once (PEFT merge_and_unload), the merged model cached on disk."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any, Callable

from acousticbench.core.errors import UserError

log = logging.getLogger("acousticbench.serve")
DONE = "ACOUSTICBENCH_MERGED.json"  # written last: a folder without it is an interrupted merge, done again
WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".safetensors.index.json", ".bin.index.json")


def cache_root() -> Path:
    """ACOUSTICBENCH_CACHE, else ~/.cache/acousticbench (mounted from the host in our containers)."""
    return Path(os.environ.get("ACOUSTICBENCH_CACHE") or Path.home() / ".cache" / "acousticbench")


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_key(base_dir: Path, adapter_dir: Path) -> str:
    """Same base snapshot and same adapter bytes -> same merged model; either changing -> a new merge."""
    base = base_dir.resolve()
    weights = sorted((p.name, p.stat().st_size) for p in base.iterdir() if p.name.endswith(WEIGHTS))
    config = (base / "config.json").read_bytes() if (base / "config.json").is_file() else b""
    adapter = sorted((p.name, _file_digest(p)) for p in adapter_dir.iterdir() if p.is_file())
    blob = json.dumps({"base": str(base), "weights": weights, "config": hashlib.sha256(config).hexdigest(),
                       "adapter": adapter}, allow_nan=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _check_disk(folder: Path, need_gb: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    free_gb = shutil.disk_usage(folder).free / 1e9
    if free_gb < need_gb:
        raise UserError(f"merging the LoRA adapter needs about {need_gb:g} GB free in {folder}, only {free_gb:.0f} GB "
                        "is: free some space or set ACOUSTICBENCH_CACHE to a bigger disk.")


def _link_base_files(base_dir: Path, merged_dir: Path) -> None:
    """Everything of the base snapshot but its top-level weights (tokenizer, audio tower, code) beside the merge."""
    for path in base_dir.rglob("*"):
        rel = path.relative_to(base_dir)
        if path.is_dir() or (len(rel.parts) == 1 and path.name.endswith(WEIGHTS)) or (merged_dir / rel).exists():
            continue
        (merged_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(path.resolve(), merged_dir / rel)


def merged_model_dir(base_dir: Path, adapter_dir: Path, load_base: Callable[[Path], Any], *, need_gb: float) -> Path:
    """The folder of base+adapter merged; made on the first start, reused on every later one."""
    target = cache_root() / "merged" / cache_key(base_dir, adapter_dir)
    if (target / DONE).is_file():
        log.info("reusing the merged model in %s (adapter %s)", target, adapter_dir)
        return target
    _check_disk(target.parent, need_gb)
    log.warning("merging LoRA adapter %s into %s, once: the merged model is cached in %s (about %g GB of disk on "
                "this first start; later starts reuse it)", adapter_dir, base_dir, target, need_gb)
    from peft import PeftModel

    merged = PeftModel.from_pretrained(load_base(base_dir), str(adapter_dir)).merge_and_unload()
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    merged.save_pretrained(partial)
    _link_base_files(base_dir, partial)
    done = {"base": str(base_dir), "adapter": str(adapter_dir)}
    (partial / DONE).write_text(json.dumps(done, allow_nan=False) + "\n")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(partial, target)  # atomic: a crash mid-merge never leaves a folder that looks finished
    log.info("merged model ready in %s", target)
    return target
