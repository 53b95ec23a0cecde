"""Pairs of nuisance values whose log ratio is drawn to balance two rival cues: number against span, rate against count."""
# When a rival cue is the product or quotient of the attribute and a nuisance (number = rate x span), no rove of the
# nuisance makes both rivals of a pair uninformative: centring its log ratio half way between their break-evens makes
# each point the right way equally often, and spreading it over all the bounds allow keeps that share near one half.

from __future__ import annotations

import numpy as np


def _logit(p: float) -> float:
    return float(np.log(p / (1.0 - p)))


def _expit(x: float) -> float:
    return float(1.0 / (1.0 + np.exp(-x)))


def balanced_pair(rng: np.random.Generator, bounds: tuple[float, float], centre: float,
                  odds: bool = False) -> tuple[float, float]:
    """(x, y) within `bounds` whose log ratio log(x / y) is uniform over all the bounds allow around `centre`, the
    pair placed at random within them. `odds`: the log ratio of their odds instead, for shares of a whole whose
    complements count as much (a beat's share of its interval, and the silence's)."""
    to, back = (_logit, _expit) if odds else (np.log, np.exp)
    width = to(bounds[1]) - to(bounds[0]) if odds else float(np.log(bounds[1] / bounds[0]))
    reach = max(width - abs(centre), 0.0)
    ratio = float(np.clip(rng.uniform(centre - reach, centre + reach), -width, width))
    middle = rng.uniform(to(bounds[0]) + abs(ratio) / 2, to(bounds[1]) - abs(ratio) / 2)
    return float(back(middle + ratio / 2)), float(back(middle - ratio / 2))
