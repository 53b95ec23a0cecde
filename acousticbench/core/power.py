"""How small a difference between two models a comparison can find: the minimum detectable difference of the paired
test by question (core/significance.py) at 80% power and a two-sided alpha of 0.05, from the number of questions and
seeds and the spread of the per-question differences, measured (the paired view) or assumed (the --dry-run plan)."""
from __future__ import annotations

import math
from dataclasses import dataclass

ALPHA, POWER = 0.05, 0.80


def detectable_difference(questions: int, sd: float, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The true difference in accuracy (A - B, a share) that the paired test finds with chance `power` at `alpha`:
    (t(1 - alpha / 2) + t(power)) * sd / sqrt(n), Student's t on n - 1 degrees of freedom, sd the standard deviation of
    the per-question differences (seeds averaged within a question); None under 2 questions. Above 1 (100 points) no
    difference between two accuracies is detectable: detectable_text and power_line say so, never the figure."""
    if questions < 2:
        return None
    from scipy.special import stdtrit  # scipy is a dependency; special alone, not scipy.stats

    df = questions - 1
    return float(stdtrit(df, 1 - alpha / 2) + stdtrit(df, power)) * sd / math.sqrt(questions)


@dataclass(frozen=True)
class Assumptions:
    """What the plan's figure rests on before any answer exists: both models' accuracy, how often they disagree on a
    question with one seed each (discordance), and how often a model's answer repeats across seeds."""

    accuracy: float = 0.7
    discordance: float | None = None  # None: 2p(1 - p), the two models' errors independent given their accuracy
    seed_agreement: float = 0.9  # the correlation of one model's answers to one question across seeds (greedy: high)

    @property
    def one_seed_discordance(self) -> float:
        p = self.accuracy
        return 2 * p * (1 - p) if self.discordance is None else self.discordance

    def difference_sd(self, seeds: int) -> float:
        """The sd of a question's difference with its answers averaged over `seeds`: the one-seed discordance's
        seed-to-seed share, 2(1 - agreement)p(1 - p), shrinks as 1 / seeds; the share between questions stays."""
        p, total = self.accuracy, self.one_seed_discordance
        within = min(total, 2 * (1 - self.seed_agreement) * p * (1 - p))
        return math.sqrt(total - within + within / max(seeds, 1))

    def text(self) -> str:
        how = ("2p(1 - p): errors independent given accuracy; models that miss the same questions disagree less, so "
               "this is on the safe side" if self.discordance is None else "given")
        return (f"assumes both models near {self.accuracy:.0%} accuracy, disagreeing on "
                f"{self.one_seed_discordance:.0%} of questions with one seed each ({how}), and a model's answer "
                f"repeating across seeds with correlation {self.seed_agreement:g}")


def detectable_text(difference: float | None, questions: int) -> str:
    """A table cell's detectable difference in points: '8.8'; 'none with n=6' where even 100 points, the most two
    accuracies can differ, would be missed at 80% power; '-' where none can be given."""
    if difference is None:
        return "-"
    return f"none with n={questions}" if difference > 1 else f"{100 * difference:.1f}"


def power_line(questions: int, seeds: int, difference: float | None, items: str = "questions") -> str:
    """'with 400 questions and 3 seeds, a difference of 8.8 points is detectable at 80% power (alpha 0.05, paired by
    question)'; a stated reason where there is none to give (too few, no spread, or no difference of 100 points or
    less detectable)."""
    seeded = f"{seeds} seed{'s' if seeds != 1 else ''}"
    if difference is not None and difference > 1:
        return (f"with {questions} {items} and {seeded}, no difference is detectable at {POWER:.0%} power (alpha "
                f"{ALPHA:g}, paired by {items[:-1]}): even a 100-point difference would be missed; more {items} "
                "would help")
    if difference is None:
        why = f"too few {items}" if questions < 2 else f"the two sides never differ on a {items[:-1]} here"
        return f"with {questions} {items} and {seeded}, no detectable difference to give ({why})"
    return (f"with {questions} {items} and {seeded}, a difference of {100 * difference:.1f} points is detectable at "
            f"{POWER:.0%} power (alpha {ALPHA:g}, paired by {items[:-1]})")
