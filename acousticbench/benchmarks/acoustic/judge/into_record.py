"""A reply to an AcousticBench question, judged, as the Record that goes to disk: the judge's label, or why it gave
none, and a reply the token limit cut kept but never scored."""
from __future__ import annotations

from acousticbench.benchmarks.acoustic.judge import JudgeFailed, judge_reply
from acousticbench.benchmarks.acoustic.judge.logprobs import NoLogprobs
from acousticbench.benchmarks.acoustic.records import JUDGE_FAILED, JudgeInfo, Judgement, Question, Record
from acousticbench.core.records import Prompt, was_cut

INTERRUPTED_NOTE = "the run was interrupted before the LLM judge read this answer: rejudge labels it"


async def judge_outcome(judge, question: Question, outcome) -> tuple[Judgement | None, str | None]:
    """The label of a reply, and why there is none when the judge gave no verdict (the record stays unparsed and
    says the judge failed, so it is not mistaken for an answer nobody could read)."""
    if outcome.reply is None:
        return None, None
    try:
        return await judge.judge(question.prompt, outcome.reply), None
    except JudgeFailed as err:
        return err.judgement, f"{JUDGE_FAILED}: {err}"
    except NoLogprobs as err:  # --judge logprobs and a reply without them: nothing to label from, never a guess
        return None, f"{JUDGE_FAILED}: {err}"


def cut_note(finish_reason: str | None, read: str | None) -> str:
    """What a truncated record says the judge read before the cut (it is kept, never scored)."""
    found = f"the judge read {read!r} before the cut" if read else "no answer before the cut"
    return f"cut by the token limit (finish_reason {finish_reason!r}): {found}; not scored"


def make_record(question: Question, prompt: Prompt, model: str, outcome,
                judgement: Judgement | None = None, judge_error: str | None = None) -> Record:
    """Join a question, what came back and how it was judged into the Record that goes to disk. A reply the token
    limit cut is `truncated`: never scored, whatever the judge read before the cut (that goes in a note)."""
    reply, notes = outcome.reply, list(outcome.reply.notes) if outcome.reply else []
    logprobs = None
    if reply is None or judge_error:  # a judge that gave no verdict is an error, never a silent "unparsed"
        chosen, status, judge = None, "error", JudgeInfo(method="none")
    else:
        judgement = judgement or judge_reply(reply, question.prompt)
        chosen, status = judgement.chosen, judgement.status
        judge = JudgeInfo(method=judgement.method, model=judgement.model)
        logprobs = judgement.logprobs
        # a logprobs label is read from the first token, which a cut after it does not touch
        if was_cut(reply.finish_reason) and status != "refused" and judgement.method != "logprobs":
            notes.append(cut_note(reply.finish_reason, chosen))
            chosen, status = None, "truncated"
    return Record(
        id=question.id, task=question.task, split=question.split, kind=question.kind, model=model,
        seed=prompt.seed, prompt=question.prompt, audio=question.audio,
        response=outcome.reply.text if outcome.reply else None,
        chosen=chosen, answer=question.answer,
        correct=None if question.answer is None else chosen == question.answer,
        status=status, error=outcome.error or judge_error, attempts=outcome.attempts, latency_s=outcome.latency_s,
        usage=reply.usage if reply else {}, judge=judge, logprobs=logprobs, meta=question.meta, notes=notes,
        finish_reason=reply.finish_reason if reply else None, human=reply.human if reply else None,
    )
