"""rejudge.py for AcousticBench: the LLM judge reads every null answer that has text again; the model is not asked."""
from __future__ import annotations

from typing import Any

from acousticbench.benchmarks.acoustic.records import JudgeInfo, Judgement, Record
from acousticbench.benchmarks.acoustic.judge.modes import DEFAULT_JUDGE_MODEL
from acousticbench.core.records import AUDIO_NOT_RECEIVED, Reply


def relabel(record: Record, judgement: Judgement) -> Record:
    note = f"re-judged by rejudge.py ({judgement.model or judgement.method}): was {record.status}"
    return record.model_copy(update={
        "chosen": judgement.chosen, "status": judgement.status, "error": None,
        "correct": None if record.answer is None else judgement.chosen == record.answer,
        "judge": JudgeInfo(method=judgement.method, model=judgement.model),
    }).with_note(note)


REJUDGED = "rejudge.py: judged again by "  # config.json's history says so: the run's identity names the judge model


class JudgeRelabeller:
    """One LLM judge (Judge.create("llm", ...)) for every AcousticBench run of the command."""

    settings: dict[str, Any] = {}  # no setting of the run changes: its history names the judge (views.identity)

    def __init__(self, options: dict[str, Any]):
        """Raises UserError (no key, no endpoint) before any file is touched."""
        from acousticbench.benchmarks.acoustic.judge import Judge

        self.model = options.get("judge_model") or DEFAULT_JUDGE_MODEL
        self.judge = Judge.create("llm", self.model, base_url=options.get("judge_endpoint"))
        self.judge.check_retirement()  # a retired judge model says so once, before any answer is judged

    @property
    def what(self) -> str:
        return REJUDGED + self.model

    @property
    def said(self) -> dict[str, Any]:
        """The history entry's judge: its endpoint, and where its verdicts came from when that redirected them."""
        return {"judge": self.judge.provenance()}

    async def relabel(self, records: list[Record]) -> list[Record]:
        from acousticbench.benchmarks.acoustic.judge import JudgeFailed

        from acousticbench.models.completion import NOT_UTF8

        out = []
        for record in records:
            # a truncated record stays truncated: a cut reply is never scored, whatever a judge reads in it; nor is
            # a reply garbled on its way, nor the reply of a model whose audio did not arrive (run/received.py)
            unheard = (record.error or "").startswith(AUDIO_NOT_RECEIVED)
            if record.chosen is None and record.status != "truncated" and not unheard and record.response and \
                    record.response.strip() and NOT_UTF8 not in record.notes:
                try:
                    judgement = await self.judge.judge(record.prompt, Reply(text=record.response,
                                                                            finish_reason=record.finish_reason))
                except JudgeFailed:
                    judgement = None  # no verdict: the record stays as it was
                out.append(relabel(record, judgement) if judgement else record)
            else:
                out.append(record)
        return out

    async def aclose(self) -> None:
        await self.judge.aclose()
