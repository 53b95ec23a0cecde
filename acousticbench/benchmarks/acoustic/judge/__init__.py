"""Judging: turn a model's raw reply into a Judgement (chosen option, status, how it was obtained)."""
from __future__ import annotations

import os
from typing import Any

from acousticbench.benchmarks.acoustic.judge.llm import JUDGE_PROMPT_SHA256, JUDGE_PROMPT_VERSION, JudgeFailed, LLMJudge
from acousticbench.benchmarks.acoustic.judge.logprobs import judge_logprobs
from acousticbench.benchmarks.acoustic.judge.retirement import retirement_notice
from acousticbench.benchmarks.acoustic.judge.rules import RULES_VERSION, extract_choice
from acousticbench.benchmarks.acoustic.records import Judgement
from acousticbench.core.records import Reply, was_cut
from acousticbench.core.environment import JUDGE_ENDPOINT
from acousticbench.benchmarks.acoustic.judge.modes import DEFAULT_JUDGE_MODEL, JudgeMode
from acousticbench.core.reporter import warn

__all__ = ["JUDGE_PROMPT_SHA256", "JUDGE_PROMPT_VERSION", "RULES_VERSION", "Judge", "JudgeFailed", "LLMJudge",
           "extract_choice", "judge_reply"]


class Judge:
    """Rules and the LLM judge together. mode auto: the rules first, the LLM for what they leave unparsed;
    llm: the LLM for every response (the paper's setting); rules: no LLM, offline; logprobs: P(A) against P(B) as the
    first token, from the logprobs the server returned (no LLM)."""

    def __init__(self, mode: JudgeMode = "auto", llm: LLMJudge | None = None):
        if mode not in ("auto", "llm", "rules", "logprobs"):
            raise ValueError(f"unknown judge mode {mode!r}")
        if mode in ("auto", "llm") and llm is None:
            raise ValueError(f"judge mode {mode!r} needs an LLMJudge")
        self.mode, self.llm = mode, llm

    @classmethod
    def create(cls, mode: JudgeMode = "auto", model: str = DEFAULT_JUDGE_MODEL, base_url: str | None = None,
               **llm_options: Any) -> "Judge":
        """A judge with the disk cache; the endpoint defaults to $ACOUSTICBENCH_JUDGE_ENDPOINT, else OpenAI.
        Raises UserError when an LLM is needed and no key is set."""
        if mode in ("rules", "logprobs"):
            return cls(mode)
        from acousticbench.benchmarks.acoustic.judge.cache import JudgeCache

        llm_options.setdefault("cache", JudgeCache())
        base_url = base_url or os.environ.get(JUDGE_ENDPOINT) or None
        llm = LLMJudge(model, base_url, **llm_options)  # first: without a key, auto falls back to the rules
        return cls(mode, llm)

    async def judge(self, prompt: str, reply: Reply) -> Judgement:
        """How `reply` answers the question `prompt`. Raises JudgeFailed (with `.judgement` to record) when the LLM
        judge was needed and gave no verdict. The judge model's retirement is checked once, by `probe` (or
        `check_retirement`), not here on every answer."""
        if reply.refused:
            return Judgement(chosen=None, status="refused", method="none")
        if reply.unreadable:  # garbled on its way: whatever letter it seems to hold is not the model's answer
            return Judgement(chosen=None, status="unparsed", method="none")
        if reply.choice is not None:  # given as an option (a person's click): nothing to read, whatever the mode
            return direct(reply)
        if self.mode == "logprobs":
            return judge_logprobs(reply)
        if reply.text is None:
            raise ValueError("a reply without text is an error record; it is not judged")
        if not reply.text.strip():
            return Judgement(chosen=None, status="unparsed", method="none")
        cut = was_cut(reply.finish_reason)  # both readers are told: what was said last may not be the answer
        if self.mode != "llm":
            ruled = extract_choice(prompt, reply.text, cut=cut)
            if self.mode == "rules" or ruled.status != "unparsed":
                return ruled
        return await self.llm.judge(prompt, reply.text, cut=cut)

    def check_retirement(self) -> None:
        """Warn on stderr while the LLM judge's model is scheduled to shut down; raise RetiredJudgeModel once OpenAI
        has shut it down. The rules alone have no model: nothing to check, no warning."""
        if self.llm is not None:
            notice = retirement_notice(self.llm.model, self.llm.base_url)
            if notice:
                warn(notice)

    async def probe(self) -> None:
        """Before a run: the judge model's retirement (its own message, before any request), then one question to
        the LLM judge (nothing to do for the rules); a dead judge raises UserError naming its endpoint."""
        self.check_retirement()
        if self.llm is not None:
            await self.llm.probe()

    def provenance(self) -> dict[str, Any]:
        """For config.json: the mode, the rules version and, when an LLM can be asked, its model and prompt."""
        return {"mode": self.mode, "rules_version": RULES_VERSION, **(self.llm.provenance() if self.llm else {})}

    async def aclose(self) -> None:
        if self.llm is not None:
            await self.llm.aclose()


def direct(reply: Reply) -> Judgement:
    """The label of a reply that gave its option directly (a person clicked A or B): no judge, method 'direct'."""
    return Judgement(chosen=reply.choice, status="answered", method="direct")


def judge_reply(reply: Reply, prompt: str = "") -> Judgement:
    """Rules only, synchronous: for callers that cannot await (the LLM judge needs `Judge.judge`)."""
    if reply.refused:
        return Judgement(chosen=None, status="refused", method="none")
    if reply.unreadable:
        return Judgement(chosen=None, status="unparsed", method="none")
    if reply.choice is not None:
        return direct(reply)
    return extract_choice(prompt, reply.text or "", cut=was_cut(reply.finish_reason))
