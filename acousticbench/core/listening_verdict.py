"""Does a model listen: the verdict an audio control supports, from the paired difference real minus control (swap:
answers that followed the swapped clips, against the real run's answers to the same key) with its interval, and
whether the control changes answers more than asking again with another seed does (a model that samples changes
answers without any change of audio). Never from the share of answers unchanged alone."""
from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from acousticbench.core.significance import PairedDifference, pair_questions, paired_difference

NEGLIGIBLE = 0.05  # a difference whose whole 95% interval lies within 5 points either way is taken as none
Labels = Mapping[tuple[Hashable, int], str | None]  # (question, seed) -> the label answered (None: no answer)


@dataclass(frozen=True)
class Listening:
    """One control against its real runs, over the questions both answered."""

    result: PairedDifference | None  # A: real (swap: the control's answers), B: control (swap: the real run's)
    changed: PairedDifference | None  # A: answers the control changed, B: answers another seed changed (per question)
    swap: bool = False

    @property
    def depends(self) -> bool | None:
        """Whether answers depend on the audio: the control changes more of them than another seed of the real audio
        does (its 95% interval above 0); None where that cannot be told (one seed of a model that may sample)."""
        return None if self.changed is None else self.changed.interval.low > 0

    @property
    def verdict(self) -> str:
        res = self.result
        if res is None:
            return "no question answered in both runs"
        differs = f"{100 * res.difference:+.1f} points [{100 * res.interval.low:+.1f}, {100 * res.interval.high:+.1f}]"
        if res.interval.low > 0:
            return f"follows the swap ({differs})" if self.swap else f"listens (real above control by {differs})"
        if res.interval.high < 0:
            return ("answers against the swap" if self.swap else "answers depend on the audio (real below control)")
        if self.depends:
            return "answers depend on the audio (the control changes more of them than another seed does)"
        if -NEGLIGIBLE < res.interval.low and res.interval.high < NEGLIGIBLE and self.depends is False:
            what = "does not follow the swap" if self.swap else "not listening"
            return (f"{what}: real and control within {100 * NEGLIGIBLE:.0f} points ({differs}) and the control "
                    "changes no more answers than another seed does")
        return f"undecided with this many questions ({differs}): more questions or seeds tell"


def changed_answers(real: Labels, control: Labels, sampling: bool) -> PairedDifference | None:
    """Per question: the share of its answers the control changed (against the real run, seed by seed) against the
    share another seed of the real run changed (each seed against the next); with one seed, a model that does not
    sample changes none, one that may sample cannot be told (None)."""
    by_question: dict[Hashable, list[int]] = {}
    for question, seed in real:
        by_question.setdefault(question, []).append(seed)
    control_changed: dict[Hashable, dict[int, bool]] = {}
    seed_changed: dict[Hashable, dict[int, bool]] = {}
    for question, seeds in by_question.items():
        seeds = sorted(s for s in seeds if real[question, s] is not None)
        mine = {s: real[question, s] != control[question, s] for s in seeds if control.get((question, s)) is not None}
        if not mine:
            continue
        control_changed[question] = mine
        pairs = list(zip(seeds, seeds[1:]))
        if pairs:
            seed_changed[question] = {a: real[question, a] != real[question, b] for a, b in pairs}
        elif not sampling:
            seed_changed[question] = {seeds[0]: False}
    if not seed_changed:
        return None
    return _paired(control_changed, seed_changed)


def _paired(a: dict[Hashable, dict[int, bool]], b: dict[Hashable, dict[int, bool]]) -> PairedDifference | None:
    """Paired by question, each side's share over its own answers (their seeds differ in number: not matched)."""
    counts = [(sum(a[q].values()), len(a[q]), sum(b[q].values()), len(b[q])) for q in a if q in b]
    return paired_difference(counts)


def listening(real_right: Mapping[Hashable, Mapping[int, bool]], control_right: Mapping[Hashable, Mapping[int, bool]],
              real: Labels, control: Labels, sampling: bool, swap: bool = False) -> Listening:
    """The verdict for one control: `*_right`: question -> seed -> right (swap: whether the answer is the key of the
    swapped clips, for both runs); the labels say which answers the control changed."""
    first, second = (control_right, real_right) if swap else (real_right, control_right)
    return Listening(paired_difference(pair_questions(first, second).counts), changed_answers(real, control, sampling),
                     swap)
