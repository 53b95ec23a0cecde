"""AcousticBench as a Benchmark: A/B questions of a pack, judged into Records (rules first, the LLM judge after)."""
from __future__ import annotations

import asyncio
import importlib
import os
from typing import Any

from acousticbench.core import provenance
from acousticbench.benchmarks.acoustic.pack import load_manifest, load_questions, manifest_sha256
from acousticbench.benchmarks import Prepared
from acousticbench.benchmarks.option import Option
from acousticbench.benchmarks.acoustic.judge.modes import DEFAULT_JUDGE_MODEL
from acousticbench.benchmarks.acoustic.views import AcousticViews
from acousticbench.benchmarks.acoustic.trust import check_questions
from acousticbench.benchmarks.acoustic.grading import JudgeGrader
from acousticbench.benchmarks.acoustic.judge import Judge, JudgeFailed, judge_reply
from acousticbench.benchmarks.acoustic.judge.logprobs import NoLogprobs
from acousticbench.benchmarks.acoustic.metrics import compute_metrics
from acousticbench.core.records import Prompt, was_cut
from acousticbench.benchmarks.acoustic.records import JUDGE_FAILED, JudgeInfo, Judgement, Metrics, Question, Record
from acousticbench.core.settings import RunSpec
from acousticbench.core.stats import interval_text
from acousticbench.engine.executor import KeptOnInterrupt


def select_questions(spec: RunSpec) -> tuple[list[Question], int]:
    """The split's questions in canonical id order, cut to --max-samples, after the pack check (archive/trust.py):
    the questions file, these questions and their audio are what the pack pinned, every path inside the pack.
    Returns them and the number of audio files checked."""
    everything = load_questions(spec.settings.archive, spec.task)
    questions = everything if spec.options.split == "all" else [q for q in everything if q.split == spec.options.split]
    if spec.settings.max_samples is not None:
        questions = questions[: spec.settings.max_samples]
    return questions, check_questions(spec.settings.archive, spec.task, everything, questions)


OPTIONS = ("A", "B")
INTERRUPTED_NOTE = "the run was interrupted before the LLM judge read this answer: rejudge labels it"  # every question's two options: what Random draws from


def make_prompt(spec: RunSpec, question: Question, root: str | None = None) -> Prompt:
    # string paths, not pathlib or resolve(): no filesystem call per question
    root = root or os.path.abspath(spec.settings.archive)
    audio = [os.path.normpath(os.path.join(root, rel)) for rel in question.audio]
    return Prompt(benchmark=AcousticBenchmark.name, question_id=question.id, task=question.task, text=question.prompt,
                  audio=audio, seed=spec.seed, answer_space=list(OPTIONS))


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


class AcousticBenchmark(AcousticViews):
    name = "AcousticBench"
    record_type = Record
    final_statuses = frozenset({"answered", "unparsed", "refused", "truncated"})  # the same settings cut it again
    metrics_type = Metrics
    label_field = "chosen"
    item_noun = "questions"

    def prepare(self, spec: RunSpec, cache: dict) -> Prepared:
        if spec.options.adaptive:
            from acousticbench.benchmarks.acoustic.adaptive.run import prepare_adaptive

            return prepare_adaptive(spec, make_prompt)
        key = (spec.settings.archive, spec.task, spec.options.split, spec.settings.max_samples)
        if key not in cache:  # checked once per command, not once per seed
            cache[key] = select_questions(spec)
        questions, n_audio = cache[key]
        if spec.settings.archive not in cache:
            cache[spec.settings.archive] = {"path": str(spec.settings.archive), "absolute_path": os.path.abspath(spec.settings.archive),
                                   "manifest_sha256": manifest_sha256(spec.settings.archive),
                                   "benchmark": load_manifest(spec.settings.archive).get("benchmark")}
        config = {"archive": cache[spec.settings.archive], "n_questions": len(questions),
                  "pack_check": {"passed": True, "questions_file": f"{spec.task}/questions.jsonl",
                                 "questions": len(questions), "audio_files": n_audio},
                  "prompt_template_sha256": provenance.prompt_hash([q.prompt for q in questions])}
        root = os.path.abspath(spec.settings.archive)
        return Prepared([(q, make_prompt(spec, q, root)) for q in questions], (), config)

    def grader(self, specs: list[RunSpec]) -> JudgeGrader:
        """The A/B judge every AcousticBench run of the command shares (made from the first run's judge settings)."""
        return JudgeGrader.for_specs(specs)

    def record_maker(self, spec: RunSpec, prepared: Prepared[Question], grader: JudgeGrader | None):
        judge = grader.judge if grader is not None else Judge("rules")

        async def to_record(question: Question, prompt: Prompt, outcome) -> Record:
            try:
                judged = await judge_outcome(judge, question, outcome)
            except asyncio.CancelledError:  # interrupted while the LLM judge reads it: the rules label it, or rejudge
                kept = make_record(question, prompt, spec.model, outcome)
                raise KeptOnInterrupt(kept.with_note(INTERRUPTED_NOTE) if kept.status == "unparsed" else kept) from None
            return make_record(question, prompt, spec.model, outcome, *judged)

        return to_record

    relabel_options = (
        Option("--judge-model", f"the LLM judge's model (default {DEFAULT_JUDGE_MODEL})", default=DEFAULT_JUDGE_MODEL),
        Option("--judge-endpoint", "OpenAI-compatible URL (default $ACOUSTICBENCH_JUDGE_ENDPOINT, else OpenAI)",
               url=True),
    )
    # no default: the answers asked again are judged as the run judged its others, unless --judge says otherwise
    rerun_options = (Option("--judge", "how the answers asked again are judged (default: the run's own judge)",
                            choices=("auto", "llm", "rules")),)

    def relabeller(self, options: dict[str, Any]):
        """rejudge.py: the LLM judge's reading of every null answer that has text."""
        from acousticbench.benchmarks.acoustic.relabel import JudgeRelabeller

        return JudgeRelabeller(options)

    def warm_up(self) -> None:
        """The psychometric fit's module and numpy, imported in a worker thread while questions are out, so a run's
        end does not wait for them."""
        importlib.import_module("acousticbench.benchmarks.acoustic.psychometric")

    def swapped(self, question: Question, sent: Prompt) -> Question:
        """The question as --control swap asks it: its clips in the order sent (a stereo clip: the one with its
        channels exchanged, by its absolute path) and its key the other option (the first clip is now the second,
        the left the right), so its records score what was heard."""
        audio = question.audio[::-1] if len(question.audio) == 2 else list(sent.audio)  # the pack's, or the cache's
        other = {"A": "B", "B": "A"}
        return question.model_copy(update={"audio": audio, "answer": other.get(question.answer or "")})

    def ideal_observer(self, prompt: Prompt) -> str:
        """The Oracle's answer: the attribute measured from the waveforms (oracle.py)."""
        from acousticbench.benchmarks.acoustic.oracle import observe

        return observe(prompt)

    def listener_note(self, spec: RunSpec, channels: int | None) -> dict[str, Any]:
        """{"listener": "mono listener: chance by construction"} for a one-channel listener on a stereo task (dir)."""
        from acousticbench.benchmarks.acoustic.metrics import listener_note

        note = listener_note(spec.task, channels)
        return {"listener": note} if note else {}

    def metrics(self, spec: RunSpec, records: list[Record]) -> Metrics:
        metrics = compute_metrics(records, spec.model, spec.task, spec.seed)
        if not spec.options.adaptive:
            return metrics
        from acousticbench.benchmarks.acoustic.adaptive.threshold import adaptive_threshold

        return metrics.model_copy(update={"adaptive": adaptive_threshold(spec.task, spec.options.adaptive, records)})

    def summary_line(self, result) -> str:
        """The run's line: the statuses of the n scored questions the accuracy is over, then, with their own total,
        those of the diagnostic trials beside them (every count beside an n counts that n)."""
        m = result.metrics
        s = m.scored
        acc = "n/a" if s.accuracy is None else f"{s.accuracy:.3f}"
        ci = interval_text(s.ci95 or s.wilson95, s.ci95_method, "questions")
        resumed = f", {result.resumed} kept from the earlier run" if result.resumed else ""
        if m.adaptive is not None:
            from acousticbench.benchmarks.acoustic.adaptive.run import summary_line

            return f"{result.spec.label()}: {summary_line(m.adaptive)}{resumed} -> {result.run_dir}"
        scored = {"answered": s.answered, "unparsed": round((s.parse_failure_rate or 0) * s.n),
                  "refused": round((s.refusal_rate or 0) * s.n), "truncated": s.truncated, "error": s.errors}
        trials = {status: m.statuses.get(status, 0) - count for status, count in scored.items()}
        judge_errors = m.error_causes.get("judge", 0)
        total_errors = m.statuses.get("error", 0)
        unheard = m.error_causes.get("audio", 0)
        causes = "".join(f"; {count} of all {total_errors} errors {what}" for count, what in
                         ((judge_errors, "the judge's"), (unheard, "audio not received")) if count)
        beside = (f"; the {sum(trials.values())} diagnostic trials beside them: {_status_counts(trials)}"
                  if sum(trials.values()) else "")
        return (f"{result.spec.label()}: accuracy {acc}{ci} over {s.n} scored questions: {_status_counts(scored)}"
                f"{beside}{causes}{resumed} -> {result.run_dir}")

    def headline(self, metrics: Any) -> tuple[float | None, int]:
        """Accuracy and the number of items it is over, for tables."""
        return metrics.scored.accuracy, metrics.scored.n

    def headline_errors(self, metrics: Any) -> int:
        """The failed scored questions (the diagnostic trials' errors are counted apart, in `statuses`)."""
        return metrics.scored.errors

    def headline_stderr(self, metrics: Any) -> float | None:
        """The standard error of the headline accuracy (the sweep file's `stderr`)."""
        return metrics.scored.acc_stderr

    def scored(self, record: Record) -> bool:
        return record.kind == "scored"

    def reference_keys(self) -> tuple[str, ...]:
        return ("id", "benchmark", "task", "split", "kind", "model", "seed", "response", "chosen", "answer", "correct",
                "status", "judge")


BENCHMARK = AcousticBenchmark()


def _status_counts(counts: dict[str, int]) -> str:
    """'380 answered, 1 unparsed, 2 refused, 10 truncated (cut by the token limit), 7 errors' (truncated only where
    there are any)."""
    cut = f"{counts['truncated']} truncated (cut by the token limit), " if counts["truncated"] else ""
    return (f"{counts['answered']} answered, {counts['unparsed']} unparsed, {counts['refused']} refused, {cut}"
            f"{counts['error']} errors")
