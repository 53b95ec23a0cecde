"""Statistics every benchmark and tool shares: binomial intervals (pure math; no harness module below it but records)."""
from __future__ import annotations

import math

from acousticbench.records import Interval

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> Interval | None:
    """Wilson score interval for a binomial proportion; None for n == 0."""
    if n == 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(low=max(0.0, centre - half), high=min(1.0, centre + half))
