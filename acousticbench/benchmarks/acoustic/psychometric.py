"""The psychometric function of a model on one attribute: accuracy against difficulty level, fitted by maximum
likelihood with scipy's L-BFGS-B, and the 75%-correct threshold with a parametric-bootstrap interval (Wichmann &
Hill 2001). scipy is imported only when a fit is made."""
from __future__ import annotations

from typing import Literal

import numpy as np

from acousticbench.benchmarks.acoustic.records import PsychometricFit

GUESS = 0.5  # two options
LAPSE_MAX = 0.2
CRITERION = 0.75
BOOTSTRAP = 200
BOOTSTRAP_SEED = 20261130  # fixed: metrics.json is the same every time it is computed from the same records
MIN_LEVELS = 3  # three parameters
BOOTSTRAP_MAXITER = 300  # the bootstrap's intervals move by < 0.005 level beyond ~150 iterations (bench: 5 curves)


def curve(levels, midpoint: float, spread: float, lapse: float, guess: float = GUESS) -> np.ndarray:
    """P(correct) at each level: falls from 1 - lapse at easy levels to the guess rate at hard ones."""
    z = (midpoint - np.asarray(levels, dtype=float)) / spread
    return guess + (1 - guess - lapse) / (1 + np.exp(-z))


def threshold_of(midpoint, spread, lapse, criterion: float = CRITERION, guess: float = GUESS):
    """The level where the curve equals `criterion` (vectorised); nan where the curve never reaches it."""
    share = (criterion - guess) / (1 - guess - np.asarray(lapse, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((share > 0) & (share < 1), midpoint - spread * np.log(share / (1 - share)), np.nan)


def _terms(theta: np.ndarray, x: np.ndarray, k: np.ndarray, n: np.ndarray):
    th = theta.reshape(-1, 3)
    a, b, lapse = th[:, :1], np.exp(th[:, 1:2]), th[:, 2:3]
    z = (a - x) / b
    f = 0.5 * (1 + np.tanh(z / 2))  # the logistic, without overflow
    scale = 1 - GUESS - lapse
    p = np.clip(GUESS + scale * f, 1e-12, 1 - 1e-12)
    return -(k * np.log(p) + (n - k) * np.log1p(-p)), (b, z, f, scale, p)


def _nll(theta: np.ndarray, x: np.ndarray, k: np.ndarray, n: np.ndarray) -> tuple[float, np.ndarray]:
    """Summed binomial negative log-likelihood of B independent fits (theta: B x (midpoint, log spread, lapse)) and its
    gradient; the fits share nothing, so one L-BFGS-B call solves all B (the bootstrap in one optimiser run)."""
    terms, (b, z, f, scale, p) = _terms(theta, x, k, n)
    nll = terms.sum()
    dp = -(k / p - (n - k) / (1 - p))
    slope = dp * scale * f * (1 - f)
    grad = np.stack([(slope / b).sum(1), (-slope * z).sum(1), (-dp * f).sum(1)], axis=1)
    return float(nll), grad.ravel()


def _fit_many(x: np.ndarray, k: np.ndarray, n: np.ndarray, start: np.ndarray, maxiter: int = 1000) -> np.ndarray:
    """`maxiter` bounds the walk of fits whose midpoint drifts along a flat ridge beyond the tested levels (data above
    the criterion everywhere): their threshold is 'beyond' wherever they stop; the others converge well before."""
    from scipy.optimize import minimize

    lo, hi = x.min(), x.max()
    bounds = [(lo - 5, hi + 5), (np.log(0.05), np.log(20.0)), (0.0, LAPSE_MAX)] * len(start)
    result = minimize(_nll, start.ravel(), args=(x, k, n), jac=True, method="L-BFGS-B", bounds=bounds,
                      options={"maxiter": maxiter, "ftol": 1e-9, "gtol": 1e-8})  # thresholds to ~1e-3 level
    return result.x.reshape(-1, 3)


def _best_start(x: np.ndarray, k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The maximum-likelihood parameters, from starts across the level range (the surface has flat ridges)."""
    starts = np.array([[m, 0.0, 0.02] for m in np.linspace(x.min() - 1, x.max() + 1, 5)])
    data = np.repeat(k, len(starts), axis=0)
    fits = _fit_many(x, data, n, starts)
    return fits[int(np.argmin(_terms(fits, x, data, n)[0].sum(1)))]


def _threshold_side(levels: np.ndarray, params: np.ndarray) -> Literal["above", "below"] | None:
    """Where the fitted curve stays when it does not cross the criterion within the tested levels; None when it does."""
    top, bottom = curve([levels.min(), levels.max()], *params)
    if bottom >= CRITERION:
        return "above"
    if top <= CRITERION:
        return "below"
    return None


def _in_range(t: np.ndarray, params: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Thresholds beyond the tested levels become +-inf: +inf when the curve is still above the criterion at the
    hardest level, -inf when it is below it at the easiest."""
    hard = curve(levels.max(), params[:, 0], np.exp(params[:, 1]), params[:, 2]) >= CRITERION
    t = np.where(np.isnan(t), np.where(hard, np.inf, -np.inf), t)
    return np.where(t > levels.max(), np.inf, np.where(t < levels.min(), -np.inf, t))


def fit_psychometric(counts: dict[int, tuple[int, int]], bootstrap: int = BOOTSTRAP,
                     seed: int = BOOTSTRAP_SEED) -> PsychometricFit | None:
    """Fit level -> (n, correct); None when fewer than MIN_LEVELS levels have questions."""
    levels = sorted(level for level, (n, _) in counts.items() if n > 0)
    if len(levels) < MIN_LEVELS:
        return None
    x = np.array(levels, dtype=float)
    n = np.array([counts[level][0] for level in levels], dtype=float)
    k = np.array([counts[level][1] for level in levels], dtype=float)
    best = _best_start(x, k[None], n)
    params = np.array([best[0], np.exp(best[1]), best[2]])
    side = _threshold_side(x, params)
    threshold = None if side else float(threshold_of(*params))
    interval, beyond = _bootstrap(x, n, best, params, bootstrap, seed) if side != "below" else (None, [])
    return PsychometricFit(
        levels=levels, n=n.astype(int).tolist(), correct=np.rint(k).astype(int).tolist(), guess=GUESS,
        midpoint=float(params[0]), spread=float(params[1]), lapse=float(params[2]), lapse_max=LAPSE_MAX,
        criterion=CRITERION, threshold=threshold, threshold_side=side,
        threshold_note=f"{side} {CRITERION:.0%} at every tested level" if side else None, threshold_ci95=interval,
        threshold_ci95_beyond=beyond or [False, False], bootstrap=bootstrap if interval else 0)


def _bootstrap(x, n, best, params, bootstrap: int, seed: int) -> tuple[list[float], list[bool]]:
    """Percentile interval of the threshold over fits to data simulated from the fitted curve."""
    rng = np.random.default_rng(seed)
    resampled = rng.binomial(n.astype(int), curve(x, *params), size=(bootstrap, len(x))).astype(float)
    boot = _fit_many(x, resampled, n, np.repeat(best[None], bootstrap, axis=0), maxiter=BOOTSTRAP_MAXITER)
    t = _in_range(threshold_of(boot[:, 0], np.exp(boot[:, 1]), boot[:, 2]), boot, x)
    ends = np.quantile(t, [0.025, 0.975], method="inverted_cdf")
    return [float(np.clip(e, x.min(), x.max())) for e in ends], [bool(not np.isfinite(e)) for e in ends]


def level_steps(metas) -> tuple[dict[int, float], str | None]:
    """level -> the difference its questions pose (meta `step`), and the unit, from scored questions' meta."""
    steps: dict[int, float] = {}
    units = set()
    for meta in metas:
        if isinstance(meta.get("level"), int) and isinstance(meta.get("step"), (int, float)) and meta["step"] > 0:
            steps.setdefault(meta["level"], float(meta["step"]))
            units.add(meta.get("unit"))
    return steps, (units.pop() if len(units) == 1 else None)


def physical(level: float | None, steps: dict[int, float]) -> float | None:
    """The difference at a fractional level: log-linear between the two levels around it (the steps shrink
    geometrically with level); None beyond the tested levels or without a step at both neighbours."""
    if level is None or not steps or not min(steps) <= level <= max(steps):
        return None
    low, high = int(np.floor(level)), int(np.ceil(level))
    if low not in steps or high not in steps:
        return None
    if low == high:
        return steps[low]
    w = level - low
    return float(np.exp((1 - w) * np.log(steps[low]) + w * np.log(steps[high])))


def in_units(fit: PsychometricFit | None, steps: dict[int, float], unit: str | None) -> PsychometricFit | None:
    """The fit with its threshold (and interval) also as a physical difference, when the questions give steps."""
    if fit is None or not steps or unit is None:
        return fit
    ends = [physical(e, steps) for e in fit.threshold_ci95 or []]
    return fit.model_copy(update={
        "unit": unit, "steps": [steps.get(level) for level in fit.levels],
        "threshold_physical": physical(fit.threshold, steps),
        "threshold_physical_ci95": sorted(ends) if ends and None not in ends else None})
