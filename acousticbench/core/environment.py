"""Settings read from the environment, in one leaf module every layer may import (docs/settings.md lists them)."""
from __future__ import annotations

import math
import os
import re

from acousticbench.core.errors import UserError


def env_number(variable: str, default: float, *, minimum: float = 0.0, whole: bool = False) -> float:
    """A number from the environment (`whole`: a count); a bad value is a one-line user error naming the variable."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or (whole and not value.is_integer()):  # nan, inf: no count, wait or rate means them
        kind = "a whole number" if whole else "a finite number"
        raise UserError(f"{variable}={text!r} is not {kind}; unset it or give e.g. {variable}={default:g}.")
    if value < minimum:
        raise UserError(f"{variable} must be {minimum:g} or more, got {value:g}.")
    return value


def endpoint_variable(serve_name: str) -> str:
    """'voxtral_mini_3b' -> 'ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT'."""
    return f"ACOUSTICBENCH_{serve_name.upper()}_ENDPOINT"


JUDGE_ENDPOINT = "ACOUSTICBENCH_JUDGE_ENDPOINT"
CACHE_DIR = "ACOUSTICBENCH_CACHE_DIR"


def cache_dir():
    """Where the harness keeps what it may recompute (judge verdicts, files the pack check verified):
    $ACOUSTICBENCH_CACHE_DIR, else ~/.cache/acousticbench."""
    from pathlib import Path

    root = os.environ.get(CACHE_DIR)
    return Path(root).expanduser() if root else Path.home() / ".cache" / "acousticbench"


NAME_LIMIT = 80  # a model's part of a folder name: with task, backend, seed and stamp well under 255 bytes


def safe_name(name: str) -> str:
    """A display name as one folder name, one name to one folder: a name of letters, digits and ._+- (in Unicode's
    composed form, NFC, however it was typed) is itself; any other (a space, a slash, an accent, over NAME_LIMIT
    characters) keeps its safe part with '_' for the rest, cut short, and the first 8 hex digits of the sha256 of the
    whole name, so two names that read alike on disk never share a folder."""
    import hashlib
    import unicodedata

    name = unicodedata.normalize("NFC", name)
    safe = re.sub(r"[^A-Za-z0-9._+-]", "_", name)
    if safe == name and len(name) <= NAME_LIMIT:
        return name
    return f"{safe[:NAME_LIMIT - 9]}~{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def same_name(a: str, b: str) -> bool:
    """Whether two model names are the same name, however each was typed (Unicode's composed and decomposed forms)."""
    import unicodedata

    return unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)


VLLM_VENV = "ACOUSTICBENCH_VLLM_VENV"


def vllm_venv():
    """The virtual environment with real vLLM that scripts/setup_vllm.sh makes: $ACOUSTICBENCH_VLLM_VENV, else
    .venv-vllm in the repository root."""
    from pathlib import Path

    root = os.environ.get(VLLM_VENV)
    return Path(root).expanduser() if root else Path(__file__).resolve().parents[2] / ".venv-vllm"


DOCKER_NETWORK = "ACOUSTICBENCH_DOCKER_NETWORK"


def docker_network(host_flag: bool = False) -> str:
    """docker_serve.sh's network: "host" (--host-network, or $ACOUSTICBENCH_DOCKER_NETWORK=host: an engine without a
    bridge) or "bridge" (the default: a port published on 127.0.0.1)."""
    value = os.environ.get(DOCKER_NETWORK, "").strip() or "bridge"
    if value not in ("bridge", "host"):
        raise UserError(f"{DOCKER_NETWORK}={value}: give host (builds and containers on the host's network) or "
                        "bridge (the default).")
    return "host" if host_flag else value
