"""AcousticBench's grader: the A/B judge a sweep's AcousticBench runs share (rules first, the LLM judge after), made
once per command, probed before the first model call and closed after the last."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acousticbench.core.errors import UserError
from acousticbench.benchmarks.acoustic.judge import Judge

NO_LLM_NOTE = ("no LLM judge (set OPENAI_API_KEY or pass --judge-endpoint): answers the rules cannot read stay "
               "unparsed; judge them later with scripts/rejudge.py")


def make_judge(spec) -> tuple[Judge, str | None]:
    """The run's judge. --judge auto with no judge key or endpoint falls back to the rules and says so: what they
    cannot read stays unparsed (scripts/rejudge.py can judge it later); --judge llm without one is an error."""
    try:
        return Judge.create(spec.options.judge, spec.options.judge_model, base_url=spec.options.judge_endpoint), None
    except UserError:
        if spec.options.judge != "auto":
            raise
    return Judge("rules"), NO_LLM_NOTE


@dataclass(frozen=True)
class JudgeGrader:
    """The seam's Grader for AcousticBench: one Judge (from the first run's judge settings) for the whole command."""

    judge: Judge
    note: str | None  # why labels may be missing (no LLM judge available)

    @classmethod
    def for_specs(cls, specs: list) -> "JudgeGrader":
        return cls(*make_judge(specs[0]))

    async def probe(self) -> None:
        await self.judge.probe()  # a dead judge stops the command before any model call is paid for

    async def aclose(self) -> None:
        await self.judge.aclose()

    def provenance(self, spec) -> dict[str, Any]:
        """config.json's `judge` section."""
        return {"judge": {"requested": spec.options.judge, **self.judge.provenance(), "note": self.note}}
