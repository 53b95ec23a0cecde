"""A simulated listener whose truth is known: it knows each question's key and level (from the pack the test builds),
hears the difference with a chosen probability per level, guesses with a chosen bias otherwise, and refuses or is cut
off at chosen rates. The OpenAI server answers as it (openai_server's `listeners` option), and the statistics-level
tests draw from the very same `reply`, so a figure measured over many simulated repeats holds for the served runs."""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path

REFUSAL = "I can't help with that."
CUT = "Comparing the two clips, the first one"


def uniforms(*parts: object) -> tuple[float, ...]:
    """Four deterministic draws in [0, 1) from their parts: the same listener, question and seed always answer alike."""
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=32).digest()
    return tuple(x / 2**64 for x in struct.unpack(">4Q", digest))


def uniform(*parts: object) -> float:
    return uniforms(*parts)[0]


@dataclass(frozen=True)
class Question:
    answer: str | None  # "A" or "B"; None for an identical pair (no right answer)
    level: int | None  # 1 (easiest) .. 5; None for a diagnostic question


@dataclass(frozen=True)
class Listener:
    """Its truth: P(right) on a question of `level` whose answer is `answer` is (1 - refusal - cutoff) times
    knows[level - 1] + (1 - knows[level - 1]) * (bias_a if answer is A else 1 - bias_a). `name` seeds its draws: two
    listeners of identical truth and different names answer independently. On a share `consistency` of questions its
    outcome is the same under every seed (as a greedy model's seeds are near-copies), elsewhere drawn afresh per seed;
    the chance of a right answer is the same either way."""

    name: str
    knows: tuple[float, ...] = (0.9, 0.75, 0.55, 0.35, 0.15)
    bias_a: float = 0.5
    refusal: float = 0.0
    cutoff: float = 0.0
    consistency: float = 0.9
    deaf: bool = False  # ignores its audio: answers from the text alone, so a control changes none of its answers
    clips: int | None = None  # the server passes it only this many clips (a server that drops the second clip)
    channels: int = 2  # 1: it hears a stereo clip downmixed, so left from right is beyond it

    def p_right(self, q: Question) -> float:
        if q.answer is None:
            return 0.0
        knows = self.knows[(q.level or 1) - 1]
        guess = self.bias_a if q.answer == "A" else 1 - self.bias_a
        return (1 - self.refusal - self.cutoff) * (knows + (1 - knows) * guess)

    def reply(self, key: str, q: Question, seed: int | None) -> tuple[str, str | None]:
        """(what happened: 'answer', 'refusal' or 'cutoff'; the label it says, for an answer)."""
        return self.replies(key, q, (seed,))[0]

    def replies(self, key: str, q: Question, seeds: tuple) -> list[tuple[str, str | None]]:
        """reply() under each seed, the question's own draws made once."""
        fixed, *same = uniforms(self.name, key)
        return [self._outcome(q, same if fixed < self.consistency else uniforms(self.name, key, seed)[1:])
                for seed in seeds]

    def _outcome(self, q: Question, draws) -> tuple[str, str | None]:
        fate, hears, guess = draws
        if fate < self.refusal:
            return "refusal", None
        if fate < self.refusal + self.cutoff:
            return "cutoff", None
        knows = self.knows[(q.level or 1) - 1] if q.answer else 0.0
        if hears < knows:
            return "answer", q.answer
        return "answer", "A" if guess < self.bias_a else "B"

    def right(self, key: str, q: Question, seeds: tuple) -> list[bool]:
        """Whether it answers right under each seed."""
        return [kind == "answer" and label == q.answer for kind, label in self.replies(key, q, seeds)]


def pack_questions(archive: Path, task: str = "rad", swapped: bool = False) -> dict[str, tuple[str, Question]]:
    """The key a server sees (the sha256 of a question's first clip) -> (question id, what the listener knows of it);
    with `swapped`, also each two-clip question heard in the other order, keyed by its second clip, its answer the
    other one (a question's own key wins)."""
    from acousticbench.benchmarks.acoustic.pack import load_questions

    questions = load_questions(archive, task)
    known = {q.sha256[q.audio[0]]: (q.id, Question(q.answer, q.meta.get("level"))) for q in questions}
    flipped = {None: None, "A": "B", "B": "A"}
    for q in questions if swapped else ():
        if len(q.audio) == 2:
            known.setdefault(q.sha256[q.audio[1]], (q.id, Question(flipped[q.answer], q.meta.get("level"))))
    return known
