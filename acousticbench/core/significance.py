"""Model against model on the same questions: answers paired by question with seeds averaged inside a question (a seed
is never a new pair), the difference's 95% interval over questions (Newcombe's score interval for paired proportions,
which never leaves [-1, 1]), an exact sign-flip test of it, and Benjamini-Hochberg's control of the false discovery
rate across a grid of such tests."""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from acousticbench.core.records import Interval
from acousticbench.core.stats import wilson_interval

# question -> seed -> whether that seed's answer was right (only scored answers)
Answers = Mapping[Hashable, Mapping[int, bool]]
EXACT_LIMIT = 50_000_000  # sign patterns are counted exactly below this much work; above, 20,000 seeded random flips
METHOD = ("exact sign-flip test on the per-question differences (seeds averaged within a question; with one seed "
          "each it is McNemar's exact test)")


@dataclass(frozen=True)
class Pairing:
    """The questions two sides both answered, each as (A right, A's answers, B right, B's answers) over the seeds
    used; seeds are matched where the sides share any (the same seed asks the same prompt), else each side's own."""

    counts: tuple[tuple[int, int, int, int], ...]
    questions: tuple[Hashable, ...]
    seeds: tuple[int, ...]  # the seeds both sides answered (empty: none shared, each side's own were averaged)
    seeds_a: tuple[int, ...]
    seeds_b: tuple[int, ...]
    unpaired_a: int  # questions only A answered (on the seeds used)
    unpaired_b: int


def pair_questions(a: Answers, b: Answers) -> Pairing:
    """Pair two sides' answers question by question (see Pairing)."""
    seeds_a = sorted({s for by_seed in a.values() for s in by_seed})
    seeds_b = sorted({s for by_seed in b.values() for s in by_seed})
    shared = set(seeds_a) & set(seeds_b)
    counts, questions = [], []
    for question, mine in a.items():
        theirs = b.get(question)
        if not theirs:
            continue
        if shared:
            used = sorted(mine.keys() & theirs.keys() & shared)
            if not used:
                continue
            mine, theirs = {s: mine[s] for s in used}, {s: theirs[s] for s in used}
        counts.append((sum(mine.values()), len(mine), sum(theirs.values()), len(theirs)))
        questions.append(question)
    return Pairing(tuple(counts), tuple(questions), tuple(sorted(shared)), tuple(seeds_a), tuple(seeds_b),
                   len(a) - len(questions), len(b) - len(questions))


@dataclass(frozen=True)
class PairedDifference:
    """A against B over the questions both answered: n counts questions, each the mean of its seeds."""

    questions: int
    accuracy_a: float
    accuracy_b: float
    a_better: int  # questions A got right more often than B over the seeds (one seed: only A right)
    b_better: int
    interval: Interval  # 95% interval of accuracy_a - accuracy_b over the questions (paired_interval)
    p_value: float  # two-sided sign-flip test of the per-question differences
    exact: bool  # False: estimated from seeded random flips (too many distinct differences to count)
    sd: float = 0.0  # the standard deviation of the per-question differences (core/power.py sizes a difference by it)

    @property
    def detectable(self) -> float | None:
        """The true difference this many questions and seeds find at 80% power and alpha 0.05, assuming the spread of
        per-question differences seen here (core/power.py); None without spread or under 2 questions."""
        from acousticbench.core.power import detectable_difference

        return detectable_difference(self.questions, self.sd) if self.sd > 0 else None

    @property
    def difference(self) -> float:
        return self.accuracy_a - self.accuracy_b


def paired_difference(counts: Sequence[tuple[int, int, int, int]]) -> PairedDifference | None:
    """The paired comparison of Pairing.counts; None with no question."""
    if not counts:
        return None
    scale = math.lcm(*(n for ra, na, rb, nb in counts for n in (na, nb)))  # every difference a whole number of these
    steps = [ra * (scale // na) - rb * (scale // nb) for ra, na, rb, nb in counts]
    n = len(steps)
    p, exact = sign_flip_p(steps)
    differences = [d / scale for d in steps]
    mean = math.fsum(differences) / n
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in differences) / (n - 1)) if n > 1 else 0.0
    return PairedDifference(questions=n, accuracy_a=math.fsum(ra / na for ra, na, _, _ in counts) / n,
                            accuracy_b=math.fsum(rb / nb for _, _, rb, nb in counts) / n,
                            a_better=sum(d > 0 for d in steps), b_better=sum(d < 0 for d in steps),
                            interval=paired_interval(counts), p_value=p, exact=exact, sd=sd)


def paired_interval(counts: Sequence[tuple[int, int, int, int]]) -> Interval:
    """The 95% interval of A's accuracy minus B's over paired questions (Pairing.counts): Newcombe's hybrid score
    interval for paired proportions (Newcombe 1998, method 10), each side's Wilson interval combined through the
    correlation of the two sides' answers (shrunk by half a pair, as Newcombe recommends), so it never leaves [-1, 1]
    and keeps near 95% coverage at small n where Student's t overshoots the scale. With one answer a side per question
    it is method 10 exactly; with seeds averaged inside a question each side's Wilson interval is taken at its
    effective number of questions (as across seeds, core/stats.py) and the correlation is that of the per-question
    accuracies."""
    xs = [ra / na for ra, na, _, _ in counts]
    ys = [rb / nb for _, _, rb, nb in counts]
    (p1, l1, u1, v1), (p2, l2, u2, v2) = _side(xs, sum(c[1] for c in counts)), _side(ys, sum(c[3] for c in counts))
    covariance = math.fsum((x - p1) * (y - p2) for x, y in zip(xs, ys)) / len(xs)
    # Newcombe's correction: a positive correlation shrunk by half a pair (one seed each: (ad - bc - n/2) / sqrt(efgh))
    shrunk = covariance if covariance < 0 else max(0.0, covariance - 1 / (2 * len(xs)))
    phi = min(1.0, max(-1.0, shrunk / math.sqrt(v1 * v2))) if v1 > 0 and v2 > 0 else 0.0
    below = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    above = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    difference = p1 - p2
    return Interval(low=max(-1.0, difference - below), high=min(1.0, difference + above))


def _side(values: list[float], answers: int) -> tuple[float, float, float, float]:
    """One side's accuracy over questions, its Wilson interval at the effective number of questions (a question's
    answers averaged over seeds vary less than one answer: n * p(1 - p) / variance, never above the answers), and the
    variance of its per-question accuracies (population: one seed each gives p(1 - p) and n itself)."""
    n = len(values)
    p = math.fsum(values) / n
    variance = math.fsum((v - p) ** 2 for v in values) / n
    binomial = p * (1 - p)
    if binomial <= 0 or variance <= 0:  # all right or all wrong: n; every question split alike: as many as answers
        n_eff = float(n) if binomial <= 0 else float(answers)
    else:
        n_eff = min(float(answers), max(float(n), n * binomial / variance))
    found = wilson_interval(p * n_eff, n_eff)
    return p, found.low, found.high, variance


def sign_flip_p(differences: Sequence[int]) -> tuple[float, bool]:
    """Two-sided p of the sum of the differences (whole numbers: the per-question differences on their common
    denominator) under random signs, A and B interchangeable on every question: counted exactly, or from 20,000
    seeded random flips when that is too much work. Returns (p, exact)."""
    nonzero = [d for d in differences if d]
    if not nonzero:
        return 1.0, True
    common = math.gcd(*nonzero)
    steps = [abs(d) // common for d in nonzero]
    observed = abs(sum(nonzero)) // common
    total = sum(steps)
    if len(steps) * (2 * total + 1) > EXACT_LIMIT:
        return _sampled_p(steps, observed), False
    import numpy as np

    dist = np.zeros(2 * total + 1)  # index k + total: P(sum = k)
    dist[total] = 1.0
    for step, count in Counter(steps).items():
        for _ in range(count):
            moved = np.zeros_like(dist)
            moved[step:] += dist[:-step]
            moved[:-step] += dist[step:]
            dist = moved * 0.5
    tail = dist[: total - observed + 1].sum() + dist[total + observed:].sum() if observed else 1.0
    return min(1.0, float(tail)), True


def _sampled_p(steps: list[int], observed: int, draws: int = 20_000) -> float:
    import numpy as np

    rng = np.random.default_rng(0)  # seeded: the same answers always give the same p
    values = np.asarray(steps)
    hits = 0
    for start in range(0, draws, 1000):
        signs = rng.choice((-1, 1), size=(min(1000, draws - start), len(values)))
        hits += int((np.abs(signs @ values) >= observed).sum())
    return (1 + hits) / (1 + draws)


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Each test's q-value (Benjamini-Hochberg adjusted p): calling every test with q < 0.05 different keeps the
    expected share of false discoveries among them at 5% or less (independent or positively dependent tests)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    q = [1.0] * m
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, p_values[i] * m / (rank + 1))
        q[i] = running
    return q
