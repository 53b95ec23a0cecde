"""What every attribute module produces and promises: a Trial of clips with their physical parameters."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

Answer = Literal["A", "B"]


@dataclass(frozen=True)
class Trial:
    """The clips of one question (float64, before PCM16 quantisation) and what was done to make them."""

    clips: tuple[np.ndarray, ...]
    clip_params: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    shared: dict[str, Any] = field(default_factory=dict)


class Attribute(Protocol):
    """The module interface of one attribute (stimuli/pitch.py, ...)."""

    ATTRIBUTE: str
    UNIT: str
    STEPS: tuple[float, ...]  # the difference at levels 1..5, from obvious to near the observer's limit
    CATCH_STEP: float
    CLIP_S: float

    def trial(self, rng: np.random.Generator, step: float, answer: Answer) -> Trial:
        """Clips that differ by `step` in the attribute; "A" puts more of it in the first clip (or on the left).
        step 0 gives clips with no difference in the attribute."""
        ...

    def measure(self, clip: np.ndarray, sr: int) -> float:
        """The attribute measured from a waveform; larger means more (for direction: further left)."""
        ...
