"""Kimi-Audio LoRA finetunes (paper section 4.2) as models of their own: one per PEFT adapter folder under
<archive>/lora/<name>/, read by the registry (run.py --model, --list-models) and by serving (docker_serve.sh)."""
from __future__ import annotations

import re
import zlib
from dataclasses import replace
from pathlib import Path

from acousticbench.core.errors import UserError
from acousticbench.models.open_weight import BY_SERVE_NAME, OpenWeight

BASE = BY_SERVE_NAME["kimi_audio_7b_instruct"]  # the model every adapter is merged into
SERVE_PREFIX = "kimi_lora_"  # docker_serve.sh kimi_lora_<name>; ACOUSTICBENCH_KIMI_LORA_<NAME>_ENDPOINT
NAME_SEPARATOR = "+"  # run.py --model Kimi-Audio-7B-Instruct+<name>
ADAPTER_FILE = "adapter_config.json"  # what PEFT's save_pretrained writes beside the adapter weights
MERGE_DISK_GB = 60  # the merged model's first start: the merged weights saved beside links to the base snapshot
# the options the paper's LoRA trajectories were made with: --split eval (the train half trained them)
REFERENCE_OPTIONS = (("split", "eval"),)
_VALID = re.compile(r"[A-Za-z0-9_]+")


def adapter_folder(archive: Path, name: str) -> Path:
    return Path(archive) / "lora" / name


def lora_names(archive: Path) -> list[str]:
    """The adapters under <archive>/lora/ whose folder name can be a serve name (letters, digits, _)."""
    root = Path(archive) / "lora"
    if not root.is_dir():
        return []
    return sorted(p.parent.name for p in root.glob(f"*/{ADAPTER_FILE}") if _VALID.fullmatch(p.parent.name))


def unusable_folders(archive: Path) -> list[str]:
    """Adapter folders skipped because their name has other characters: the listing says how to fix them."""
    root = Path(archive) / "lora"
    found = root.glob(f"*/{ADAPTER_FILE}") if root.is_dir() else []
    return sorted(p.parent.name for p in found if not _VALID.fullmatch(p.parent.name))


def lora_model(name: str) -> OpenWeight:
    """The table row of one finetune: Kimi-Audio-7B-Instruct's, with its own names and a port stable per name."""
    if not _VALID.fullmatch(name or ""):
        raise UserError(f"LoRA adapter name {name!r}: use letters, digits and _ only (rename <archive>/lora/{name}/).")
    port = 8100 + zlib.crc32(name.encode()) % 100  # stable, so its endpoint does not change from one start to the next
    return replace(BASE, name=f"{BASE.name}{NAME_SEPARATOR}{name}", serve_name=f"{SERVE_PREFIX}{name}", port=port,
                   description=f"{BASE.repo_id} with the LoRA adapter <archive>/lora/{name}/ merged in, our "
                               "transformers server", start_timeout_s=3600)


def name_of(model: str) -> str | None:
    """'Kimi-Audio-7B-Instruct+rad_ft' -> 'rad_ft'; None for any other model name."""
    prefix = BASE.name + NAME_SEPARATOR
    return model[len(prefix):] if model.startswith(prefix) else None


def require_adapter(archive: Path, name: str) -> None:
    """One line naming the folder, and the adapters there are, when <archive>/lora/<name>/ holds no adapter."""
    folder = adapter_folder(archive, name)
    if not (folder / ADAPTER_FILE).is_file():
        known = ", ".join(lora_names(archive)) or "none"
        raise UserError(f"no LoRA adapter {folder}/{ADAPTER_FILE}: put the PEFT adapter folder there, its name in "
                        f"letters, digits and _, or pass --archive (found: {known}).")
