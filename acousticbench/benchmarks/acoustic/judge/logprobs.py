"""--judge logprobs: the label from the probabilities of "A" and "B" as the first answer token (lm-eval's
multiple_choice idea for two options), where the server returns the first token's top alternatives."""
from __future__ import annotations

import math

from acousticbench.benchmarks.acoustic.records import Choice, Judgement
from acousticbench.core.records import Reply

LETTERS: tuple[Choice, Choice] = ("A", "B")


class NoLogprobs(ValueError):
    """The reply carries no first-token logprobs although they were asked for, or impossible ones: nothing to label
    from."""


def impossible(alternatives: dict[str, float]) -> str | None:
    """What makes the alternatives no distribution at all (a NaN, +inf or positive log-probability), or None. -inf is
    a probability of zero, and a rounding error above 0 is allowed (vLLM sends 0.0 for certainty)."""
    for token, value in alternatives.items():
        if math.isnan(value) or value > 1e-6:
            return f"the server sent logprob {value!r} for token {token!r}, which no probability has"
    return None


def letter_logprobs(alternatives: dict[str, float]) -> dict[str, float | None]:
    """log P(letter) for A and B: the tokens that are the letter once whitespace is stripped (" A", "A"), pooled;
    None for a letter among none of the alternatives (its probability is below the least one listed)."""
    found: dict[str, float | None] = {}
    for letter in LETTERS:
        values = [v for token, v in alternatives.items() if token.strip() == letter]
        top = max(values, default=None)
        if top is None or top == -math.inf:  # -inf: a probability of zero, which pooling would make NaN
            found[letter] = top
        else:
            found[letter] = top + math.log(sum(math.exp(v - top) for v in values))
    return found


def judge_logprobs(reply: Reply) -> Judgement:
    """The more probable of A and B as the first token; unparsed when neither is among the alternatives, or on a
    tie (no label is invented). A refusal stays a refusal."""
    if reply.refused:
        return Judgement(chosen=None, status="refused", method="none")
    if reply.first_token_logprobs is None:
        raise NoLogprobs("the server returned no logprobs for the first token (--judge logprobs needs them)")
    wrong = impossible(reply.first_token_logprobs)
    if wrong:
        raise NoLogprobs(f"{wrong}; no label is taken from it")
    found = letter_logprobs(reply.first_token_logprobs)
    a, b = found["A"], found["B"]
    if (a is None and b is None) or a == b:
        chosen = None
    elif b is None or (a is not None and a > b):
        chosen = "A"
    else:
        chosen = "B"
    return Judgement(chosen=chosen, status="answered" if chosen else "unparsed", method="logprobs", logprobs=found)
