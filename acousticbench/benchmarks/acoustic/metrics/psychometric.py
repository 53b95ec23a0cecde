"""The psychometric function of a model on one attribute: accuracy against difficulty level, fitted by maximum
likelihood within bounds, and the 75%-correct threshold with the central 95% interval of its posterior over a grid of
thresholds, slopes and lapse rates under flat priors (as psignifit 4 does: Schuett, Harmeling, Macke & Wichmann
2016). The parametric bootstrap this replaced (Wichmann & Hill 2001) covered the truth in 69-97% of simulated runs,
by task; the posterior's interval covers 89-100% of them (docs/adaptive.md, Validation).

The fit is a damped Newton method on the three parameters, projected on their bounds, run on every start at once
(as one batch of 3 x 3 systems). It reaches a likelihood at least as high as scipy's L-BFGS-B did from the same data
(tests/test_psychometric.py) and needs only numpy, so a run never imports scipy."""
from __future__ import annotations

from typing import Literal

import numpy as np

from acousticbench.benchmarks.acoustic.records import PsychometricFit

GUESS = 0.5  # two options
LAPSE_MAX = 0.2
CRITERION = 0.75
MIN_LEVELS = 3  # three parameters
BOUND = 5.0  # the midpoint may lie this many levels beyond the tested ones (the fit's bound, the prior's reach)
SPREAD_RANGE = (0.05, 20.0)  # levels per logistic unit: the fit's bounds and the prior's
MAXITER = 1000  # Newton steps of a fit at most
POSTERIOR_POINTS = (400, 24, 11)  # the grid's thresholds (uniform), spreads (log-uniform) and lapse rates (uniform)


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


def _steps(theta: np.ndarray, x: np.ndarray, k: np.ndarray, n: np.ndarray):
    """The gradient and Hessian of each fit's negative log-likelihood (theta: B x (midpoint, log spread, lapse)).
    The Hessian is the observed one where it is positive definite, else the expected (Fisher) information, which
    always is: Newton steps near the optimum, safe steps far from it."""
    _, (b, z, f, scale, p) = _terms(theta, x, k, n)
    df = f * (1 - f)
    jac = np.stack([scale * df / b, -scale * df * z, -f], axis=2)  # dp/dtheta: B x levels x 3
    dp = -(k / p - (n - k) / (1 - p))  # dNLL/dp
    grad = (dp[..., None] * jac).sum(1)
    fisher = np.einsum("bl,bli,blj->bij", n / (p * (1 - p)), jac, jac)
    d2f = df * (1 - 2 * f)
    aa, as_, ss = scale * d2f / b ** 2, -scale * (d2f * z + df) / b, scale * z * (d2f * z + df)
    al, sl = -df / b, df * z
    second = np.stack([np.stack([aa, as_, al], -1), np.stack([as_, ss, sl], -1),
                       np.stack([al, sl, np.zeros_like(f)], -1)], -2)  # d2p/dtheta2: B x levels x 3 x 3
    observed = (np.einsum("bl,bli,blj->bij", k / p ** 2 + (n - k) / (1 - p) ** 2, jac, jac)
                + np.einsum("bl,blij->bij", dp, second))
    definite = np.linalg.eigvalsh(observed)[:, 0] > 1e-9 * np.abs(observed).max((1, 2))
    return grad, np.where(definite[:, None, None], observed, fisher)


def _fit_many(x: np.ndarray, k: np.ndarray, n: np.ndarray, start: np.ndarray) -> np.ndarray:
    """B independent maximum-likelihood fits (k: B x levels), each stopped when a step gains less than 1e-10 of its
    likelihood (as L-BFGS-B's ftol) or its projected gradient vanishes. Levenberg damping grows after a step that
    loses likelihood and shrinks after one that gains; a parameter on a bound that its gradient pushes outward stays
    there. MAXITER bounds the walk of fits whose midpoint drifts along a flat ridge beyond the tested levels (data
    above the criterion everywhere): their threshold is 'beyond' wherever they stop."""
    lower = np.array([x.min() - BOUND, np.log(SPREAD_RANGE[0]), 0.0])
    upper = np.array([x.max() + BOUND, np.log(SPREAD_RANGE[1]), LAPSE_MAX])
    theta = np.clip(np.array(start, dtype=float).reshape(-1, 3), lower, upper)
    k, n = np.broadcast_to(k, (len(theta), len(x))), np.broadcast_to(n, (len(theta), len(x)))
    nll = _terms(theta, x, k, n)[0].sum(1)
    damping = np.full(len(theta), 1e-4)
    live = np.arange(len(theta))
    for _ in range(MAXITER):
        if not len(live):
            break
        th, kk, nn = theta[live], k[live], n[live]
        grad, hess = _steps(th, x, kk, nn)
        pinned = ((th <= lower) & (grad > 0)) | ((th >= upper) & (grad < 0))
        free = ~pinned
        hess = hess * (free[:, :, None] & free[:, None, :]) + np.eye(3) * pinned[:, :, None]
        grad = np.where(free, grad, 0.0)
        scale = damping[live] * (np.einsum("bii->bi", hess).max(1) + 1e-9)
        step = np.linalg.solve(hess + scale[:, None, None] * np.eye(3), -grad[..., None])[..., 0]
        trial = np.clip(th + step, lower, upper)
        after = _terms(trial, x, kk, nn)[0].sum(1)
        better = after <= nll[live]
        gain = nll[live] - after
        kept = live[better]
        theta[kept], nll[kept] = trial[better], after[better]
        damping[kept] = np.maximum(damping[kept] / 5, 1e-12)
        damping[live[~better]] *= 4
        done = ((better & (gain <= 1e-10 * np.maximum(np.abs(after), 1))) | (np.abs(grad).max(1) < 1e-8)
                | (damping[live] > 1e8))
        live = live[~done]
    return theta


def _best_start(x: np.ndarray, k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The maximum-likelihood parameters, from starts across the level range, shallow and steep (the surface has
    flat ridges and more than one peak)."""
    starts = np.array([[m, s, 0.02] for s in (0.0, np.log(0.1)) for m in np.linspace(x.min() - 1, x.max() + 1, 5)])
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


def fit_psychometric(counts: dict[int, tuple[int, int]]) -> PsychometricFit | None:
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
    interval, beyond = _posterior_interval(x, n, k, threshold) if side != "below" else (None, [])
    return PsychometricFit(
        levels=levels, n=n.astype(int).tolist(), correct=np.rint(k).astype(int).tolist(), guess=GUESS,
        midpoint=float(params[0]), spread=float(params[1]), lapse=float(params[2]), lapse_max=LAPSE_MAX,
        criterion=CRITERION, threshold=threshold, threshold_side=side,
        threshold_note=f"{side} {CRITERION:.0%} at every tested level" if side else None, threshold_ci95=interval,
        threshold_ci95_beyond=beyond or [False, False], interval_method="posterior" if interval else None)


def _posterior_interval(x: np.ndarray, n: np.ndarray, k: np.ndarray,
                        fitted: float | None) -> tuple[list[float], list[bool]]:
    """The central 95% of the threshold's posterior, its slope and lapse rate integrated out, with flat priors over
    the fit's bounds, widened to hold the `fitted` threshold where that lies outside (in a few percent of simulated
    runs); an end past the tested levels is clamped to them and flagged."""
    points, spreads, lapses = POSTERIOR_POINTS
    t = np.linspace(x.min() - BOUND, x.max() + BOUND, points)[:, None, None, None]
    spread = np.geomspace(*SPREAD_RANGE, spreads)[None, :, None, None]
    lapse = np.linspace(0.0, LAPSE_MAX, lapses)[None, None, :, None]
    share = (CRITERION - GUESS) / (1 - GUESS - lapse)
    p = np.clip(curve(x, t + spread * np.log(share / (1 - share)), spread, lapse), 1e-12, 1 - 1e-12)
    log_like = (k * np.log(p) + (n - k) * np.log1p(-p)).sum(-1)
    marginal = np.exp(log_like - log_like.max()).sum((1, 2))
    ends = np.interp([0.025, 0.975], np.cumsum(marginal) / marginal.sum(), t[:, 0, 0, 0])
    if fitted is not None:
        ends = np.array([min(ends[0], fitted), max(ends[1], fitted)])
    return [float(np.clip(e, x.min(), x.max())) for e in ends], [bool(not x.min() <= e <= x.max()) for e in ends]


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
