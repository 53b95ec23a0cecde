"""Interval statistics every benchmark shares: the Wilson interval of one run (Clopper-Pearson's exact one for a small
cell), across seeds the interval clustered by question (seeds of one question are not new trials; Miller 2024,
"Adding error bars to evals") read from the runs' responses.jsonl, McNemar's exact test of two models on the same questions, and the median of values some of which lie
beyond the range tested (censored, never dropped)."""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any

from acousticbench.core.records import Interval

Z95 = 1.959963984540054
# below this many questions (or effective questions across seeds) a cell's interval is Clopper-Pearson's exact one: the
# Wilson interval's coverage dips under 95% there for accuracies near 0 or 1 (Bowyer et al., ICML 2025), the exact one
# never does; at and above it Wilson's is near nominal and the exact one needlessly wide
SMALL_N = 100
# one record as JSON (a responses.jsonl line): True correct, False wrong, None not scored (Benchmark.outcome)
Outcome = Callable[[Mapping[str, Any]], bool | None]


def wilson_interval(successes: float, n: float, z: float = Z95) -> Interval | None:
    """Wilson score interval for a binomial proportion; None for n == 0 (n may be an effective, fractional size)."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / denom
    return Interval(low=max(0.0, centre - half), high=min(1.0, centre + half))


def clopper_pearson(successes: float, n: float, level: float = 0.95) -> Interval | None:
    """Clopper-Pearson's exact interval (beta quantiles; n may be an effective, fractional size); None for n == 0."""
    if n <= 0:
        return None
    tail = (1 - level) / 2
    k = min(max(successes, 0.0), n)
    low = 0.0 if k <= 0 else _beta_quantile(tail, k, n - k + 1)
    high = 1.0 if k >= n else _beta_quantile(1 - tail, k + 1, n - k)
    return Interval(low=low, high=high)


def _beta_quantile(q: float, a: float, b: float) -> float:
    """x with I_x(a, b) = q, by bisection (a run's metrics load no scipy)."""
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if _beta_cdf(mid, a, b) < q else (low, mid)
    return (low + high) / 2


def _beta_cdf(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b): its continued fraction (modified Lentz), on the side of
    x where it converges fast."""
    if x <= 0 or x >= 1:
        return 0.0 if x <= 0 else 1.0
    if x > (a + 1) / (a + b + 2):
        return 1 - _beta_cdf(1 - x, b, a)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return front * f


def interval_method(n: float) -> str:
    """Which 95% interval a cell of n questions gets: 'clopper-pearson' (exact) below SMALL_N, else 'wilson'."""
    return "clopper-pearson" if n < SMALL_N else "wilson"


def cell_interval(successes: float, n: float) -> Interval | None:
    """The 95% interval of a cell's accuracy by interval_method: exact where the cell is small, Wilson elsewhere."""
    return clopper_pearson(successes, n) if interval_method(n) == "clopper-pearson" else wilson_interval(successes, n)


def interval_text(interval: Interval | None, method: str | None, items: str) -> str:
    """A summary line's ' [0.751, 0.999] (exact: under 100 questions)'; '' without an interval."""
    if interval is None:
        return ""
    why = f" (exact: under {SMALL_N} {items})" if method == "clopper-pearson" else ""
    return f" [{interval.low:.3f}, {interval.high:.3f}]{why}"


def clustered_stderr(scores: Iterable[tuple[Hashable, float]]) -> tuple[float, int, int] | None:
    """The standard error of the mean score over answers grouped by question (cluster): sqrt(sum over questions of
    (sum of the question's residuals)^2) / answers, as lmms-eval's clustered_stderr computes Miller's eq. 4.
    Returns (stderr, answers, questions), or None with no answers."""
    by_question: dict[Hashable, list[float]] = {}
    for question, score in scores:
        by_question.setdefault(question, []).append(float(score))
    n = sum(len(v) for v in by_question.values())
    if n == 0:
        return None
    mean = sum(sum(v) for v in by_question.values()) / n
    spread = sum((sum(v) - mean * len(v)) ** 2 for v in by_question.values())
    return math.sqrt(spread) / n, n, len(by_question)


def accuracy_stderr(scores: Iterable[tuple[Hashable, float]]) -> float | None:
    """The standard error of an accuracy (lm-eval's `acc_stderr`; inspect_ai calls it `stderr`), clustered by question
    as the intervals across seeds are: one run (one answer per question) gives sqrt(p(1 - p) / n); None with no
    answers. lm-eval divides by n - 1 (the sample variance), a factor sqrt(n / (n - 1)) that we leave out so that it
    is the same figure clustered_interval turns into an interval."""
    found = clustered_stderr(scores)
    return None if found is None else found[0]


def clustered_interval(scores: list[tuple[Hashable, float]]) -> tuple[Interval | None, float | None]:
    """A cell_interval at the effective sample size the clustering leaves (answers / design effect, Kish), and
    the effective size: seeds that agree on every question give exactly one seed's interval, independent ones the
    pooled one; the effective size is never above the number of answers."""
    found = clustered_stderr(scores)
    if found is None:
        return None, None
    se, n, questions = found
    p = sum(s for _, s in scores) / n
    binomial = p * (1 - p)
    if binomial <= 0 or se <= 0:  # every answer right (or wrong): no spread to cluster; count questions only
        n_eff = float(questions)
    else:
        n_eff = min(float(n), binomial / (se * se))
    return cell_interval(p * n_eff, n_eff), n_eff


def scored_outcomes(responses: Path, outcome: Outcome) -> list[tuple[str, float]]:
    """(item id, 1.0 if correct else 0.0) for every record of a run that its benchmark's `outcome` scores."""
    out = []
    with responses.open("rb") as lines:  # streamed, split at b"\n" alone: a reply's U+2028 is no line break
        for line in lines:
            if not line.strip():
                continue
            data = json.loads(line)
            if (correct := outcome(data)) is not None:
                out.append((data["id"], 1.0 if correct else 0.0))
    return out


def across_seeds(runs: list[tuple[float | None, int, Path | None]],
                 outcome: Outcome) -> tuple[Interval | None, float | None]:
    """The 95% interval of a cell's accuracy over its runs (accuracy, n, responses.jsonl or None), and the
    effective number of questions it is worth (cell_interval: exact below SMALL_N, else Wilson). One run: its own.
    Several: clustered by question; where a run's records cannot be read (a reference summary), the interval of the
    mean accuracy over one seed's n questions, which is never narrower than the clustered one (the design effect is
    at most the number of seeds)."""
    known = [(acc, n, path) for acc, n, path in runs if acc is not None and n]
    if not known:
        return None, None
    if len(known) == 1:
        acc, n, _ = known[0]
        return cell_interval(round(acc * n), n), float(n)
    if all(callable(path) or path is not None and path.is_file() for _, _, path in known):
        scores = [score for _, _, path in known for score in _outcomes(path, outcome)]
        return clustered_interval(scores)
    mean, n = sum(a for a, _, _ in known) / len(known), max(n for _, n, _ in known)
    return cell_interval(mean * n, n), float(n)


def _outcomes(source, outcome: Outcome) -> list[tuple[str, float]]:
    """A run's scored outcomes from its responses.jsonl, or from a callable giving (id, right) (the results index)."""
    if callable(source):
        return [(item, 1.0 if right else 0.0) for item, right in source()]
    return scored_outcomes(source, outcome)


def interval_of(entries, outcome: Outcome) -> Interval | None:
    """The 95% interval of a cell's entries (benchmarks/entry.py) over their seeds, clustered by question (their
    outcomes from the results index where the entry has them: Entry.scores)."""
    runs = [(e.accuracy, e.n, e.scores or e.responses or (e.run_dir / "responses.jsonl" if e.run_dir else None))
            for e in entries]
    return across_seeds(runs, outcome)[0]


def without_errors(entries) -> float | None:
    """The mean over every seed of its accuracy with errors left out (a seed without errors: its accuracy; one whose
    every item failed has none and is left out), where any of the runs had errors; None where none had."""
    if not any(e.error_rate for e in entries):
        return None
    known = [e.accuracy_without_errors if e.error_rate else e.accuracy for e in entries]
    known = [value for value in known if value is not None]
    return sum(known) / len(known) if known else None


Censored = tuple[str, float]  # ("=", x): a value; ("<", x) or (">", x): beyond the tested range, past its end x


def censored_median(values: list[Censored]) -> Censored | None:
    """The median of values of which some are only known to lie beyond the range tested ('<' its low end, '>' its
    high end; every value seen lies inside it): a value where the middle is seen, else '<' or '>' a bound; None with
    no value, or where the middle falls between a '<' and a '>'."""
    rank = {"<": 0, "=": 1, ">": 2}
    ordered = sorted(values, key=lambda v: (rank[v[0]], v[1]))
    if not ordered:
        return None
    n = len(ordered)
    if n % 2:
        return ordered[n // 2]
    (side_a, a), (side_b, b) = ordered[n // 2 - 1], ordered[n // 2]
    sides = {side_a, side_b} - {"="}
    if len(sides) > 1:
        return None
    return (sides.pop() if sides else "="), (a + b) / 2


def censored_text(value: Censored, digits: int = 3) -> str:
    """'0.21', '< 0.2', '> 2'."""
    side, x = value
    return f"{x:.{digits}g}" if side == "=" else f"{side} {x:.{digits}g}"
