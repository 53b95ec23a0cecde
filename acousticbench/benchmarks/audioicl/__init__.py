"""AudioICL-Bench: k-shot in-context rule learning episodes, run and scored through the AcousticBench engine."""
from __future__ import annotations

from acousticbench.core.errors import UserError

# in the order of the public episode ids (AudioICL00001.. in blocks of 300)
TASKS: tuple[str, ...] = (
    "AudioCount", "AudioCountHard", "AudioOperator", "AudioLength", "AudioLengthHard",
    "AudioOperatorHard", "MorseCode", "AudioRemap", "AnomalyDetect",
)
INTEGER_TASKS = frozenset({"AudioCount", "AudioCountHard", "AudioOperator", "AudioOperatorHard",
                           "AudioLength", "AudioLengthHard"})
SHOTS: tuple[int, ...] = (1, 2, 3, 4, 5)
ALL = "audioicl"  # --task audioicl: all nine tasks
_BY_LOWER = {t.lower(): t for t in TASKS}


def parse_shots(text: str) -> list[int]:
    """'1,3,5' -> [1, 3, 5]; each k from 1 to 5 (the public release has meta_k1..meta_k5)."""
    try:
        shots = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise UserError(f"--shots {text!r} is not a comma list of whole numbers, e.g. 1,3,5.") from None
    bad = [k for k in shots if k not in SHOTS]
    if not shots or bad:
        raise UserError(f"--shots takes values from 1 to 5 (meta_k1..meta_k5), got {text!r}.")
    return sorted(set(shots))
