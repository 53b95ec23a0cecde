"""--judge logprobs: the label from the probabilities of "A" and "B" as the first answer token (lm-eval's
multiple_choice idea for two options), where the server returns the first token's top alternatives."""
from __future__ import annotations

import math

from acousticbench.benchmarks.acoustic.records import Choice, Judgement
from acousticbench.core.records import Reply

LETTERS: tuple[Choice, Choice] = ("A", "B")


class NoLogprobs(ValueError):
    """The reply carries no first-token logprobs although they were asked for: nothing to label from."""


def letter_logprobs(alternatives: dict[str, float]) -> dict[str, float | None]:
    """log P(letter) for A and B: the tokens that are the letter once whitespace is stripped (" A", "A"), pooled;
    None for a letter among none of the alternatives (its probability is below the least one listed)."""
    found: dict[str, float | None] = {}
    for letter in LETTERS:
        values = [v for token, v in alternatives.items() if token.strip() == letter]
        top = max(values, default=None)
        found[letter] = None if top is None else top + math.log(sum(math.exp(v - top) for v in values))
    return found


def judge_logprobs(reply: Reply) -> Judgement:
    """The more probable of A and B as the first token; unparsed when neither is among the alternatives, or on a
    tie (no label is invented). A refusal stays a refusal."""
    if reply.refused:
        return Judgement(chosen=None, status="refused", method="none")
    if reply.first_token_logprobs is None:
        raise NoLogprobs("the server returned no logprobs for the first token (--judge logprobs needs them)")
    found = letter_logprobs(reply.first_token_logprobs)
    a, b = found["A"], found["B"]
    if (a is None and b is None) or a == b:
        chosen = None
    elif b is None or (a is not None and a > b):
        chosen = "A"
    else:
        chosen = "B"
    return Judgement(chosen=chosen, status="answered" if chosen else "unparsed", method="logprobs", logprobs=found)
