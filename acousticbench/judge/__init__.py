"""Judging: turn a model's raw reply into a Judgement (chosen option, status, how it was obtained)."""
from __future__ import annotations

from acousticbench.judge.rules import RULES_VERSION, extract_choice
from acousticbench.records import Judgement, Reply

__all__ = ["RULES_VERSION", "extract_choice", "judge_reply"]


def judge_reply(reply: Reply) -> Judgement:
    """Rules first; what they cannot commit to stays unparsed (never guessed)."""
    if reply.refused:
        return Judgement(chosen=None, status="refused", method="none")
    chosen = extract_choice(reply.text or "")
    if chosen is not None:
        return Judgement(chosen=chosen, status="answered", method="rules")
    return Judgement(chosen=None, status="unparsed", method="none")
