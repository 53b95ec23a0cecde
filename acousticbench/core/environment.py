"""Settings read from the environment, in one leaf module every layer may import (docs/settings.md lists them)."""
from __future__ import annotations

import math
import os
import re

from acousticbench.core.errors import UserError


# every number the harness reads from the environment and what it may be (docs/settings.md): checked all together
# before a command asks anything (check_numbers), so a bad one is never found only once a run is under way
NUMBERS: dict[str, dict] = {
    "ACOUSTICBENCH_MAX_ATTEMPTS": {"minimum": 1, "whole": True},
    "ACOUSTICBENCH_RETRY_BASE_DELAY": {}, "ACOUSTICBENCH_RETRY_MAX_DELAY": {}, "ACOUSTICBENCH_MAX_RETRY_AFTER": {},
    "ACOUSTICBENCH_REQUEST_TIMEOUT": {"minimum": 0.001}, "ACOUSTICBENCH_STALL_TIMEOUT": {"minimum": 0.001},
    "ACOUSTICBENCH_MAX_RATE_LIMITED": {"whole": True},
    "ACOUSTICBENCH_MAX_CONCURRENCY": {"minimum": 1, "whole": True},
    "ACOUSTICBENCH_MAX_REPLY_CHARS": {"minimum": 1, "whole": True},
    "ACOUSTICBENCH_HUMAN_GAP_S": {"maximum": 60},  # a silence between two clips, not a wait
    "ACOUSTICBENCH_HUMAN_PORT": {"whole": True, "maximum": 65535},
    "ACOUSTICBENCH_REGISTRY_POLL": {"minimum": 0.01}, "ACOUSTICBENCH_REPLICA_WAIT": {},
    "ACOUSTICBENCH_CONNECT_WAIT": {}, "ACOUSTICBENCH_SERVER_START_WAIT": {},
    "ACOUSTICBENCH_SLURM_REPLICAS": {"minimum": 1, "whole": True},
}


def env_number(variable: str, default: float) -> float:
    """A number from the environment, within what NUMBERS says it may be; a bad value is a one-line user error naming
    the variable."""
    limits = NUMBERS.get(variable, {})
    minimum, whole = limits.get("minimum", 0.0), limits.get("whole", False)
    maximum = limits.get("maximum", math.inf)
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
    if value > maximum:
        raise UserError(f"{variable} must be {maximum:g} or less, got {value:g}.")
    return value


def check_numbers() -> None:
    """Every number set in the environment (NUMBERS), before a command asks anything."""
    for variable in NUMBERS:
        env_number(variable, 0.0)


def env_words(variable: str) -> list[str]:
    """A variable's value split as a shell splits it (ACOUSTICBENCH_SBATCH_OPTIONS); an unclosed quote is one line
    naming the variable."""
    import shlex

    try:
        return shlex.split(os.environ.get(variable, ""))
    except ValueError as err:  # "No closing quotation", "No escaped character"
        raise UserError(f"{variable} cannot be split into words as a shell would ({err}): close its quotes.") from None


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


# what no folder of a model may be named: '.', '..', a hidden name, one Windows strips of its final dot, a device name
_SPECIAL = re.compile(r"\..*|.*\.|(CON|PRN|AUX|NUL|COM[0-9]|LPT[0-9])(\..*)?", re.IGNORECASE | re.DOTALL)


def safe_name(name: str) -> str:
    """A display name as one folder name, one name to one folder: a name of letters, digits and ._+- (in Unicode's
    composed form, NFC, however it was typed) is itself; any other (a space, a slash, an accent, over NAME_LIMIT
    characters, a name such as '..', '.hidden', 'name.' or 'CON' that a file system reads as something else) keeps its
    safe part with '_' for the rest, cut short, and the first 8 hex digits of the sha256 of the whole name, so two names
    that read alike on disk never share a folder."""
    import hashlib
    import unicodedata

    name = unicodedata.normalize("NFC", name)
    safe = re.sub(r"[^A-Za-z0-9._+-]", "_", name)
    if safe == name and len(name) <= NAME_LIMIT and not _SPECIAL.fullmatch(name):
        return name
    safe = re.sub(r"^\.|\.$", "_", safe)  # never '.', '..' or hidden, never a final dot
    safe = re.sub(r"^(CON|PRN|AUX|NUL|COM[0-9]|LPT[0-9])(?=\.|$)", r"\1_", safe, flags=re.IGNORECASE)  # nor a device
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
