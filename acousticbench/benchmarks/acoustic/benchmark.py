"""AcousticBench as a Benchmark: A/B questions of a pack, judged into Records (rules first, the LLM judge after)."""
from __future__ import annotations

import importlib
import os
from dataclasses import fields
from pathlib import Path
from typing import Any

from acousticbench.core import provenance
from acousticbench.benchmarks.acoustic.pack import load_manifest, load_questions, manifest_sha256
from acousticbench.benchmarks import Prepared
from acousticbench.benchmarks.acoustic.views import AcousticViews
from acousticbench.benchmarks.acoustic.trust import check_questions
from acousticbench.benchmarks.acoustic.grading import JudgeGrader
from acousticbench.benchmarks.acoustic.judge import Judge, JudgeFailed, judge_reply
from acousticbench.benchmarks.acoustic.judge.logprobs import NoLogprobs
from acousticbench.benchmarks.acoustic.metrics import compute_metrics
from acousticbench.core.records import JUDGE_FAILED, Judgement, JudgeInfo, Prompt, was_cut
from acousticbench.benchmarks.acoustic.records import Metrics, Question, Record
from acousticbench.benchmarks.acoustic.spec import GenerationConfig, RunSpec


def select_questions(spec: RunSpec) -> tuple[list[Question], int]:
    """The split's questions in canonical id order, cut to --max-samples, after the pack check (archive/trust.py):
    the questions file, these questions and their audio are what the pack pinned, every path inside the pack.
    Returns them and the number of audio files checked."""
    everything = load_questions(spec.archive, spec.task)
    questions = everything if spec.split == "all" else [q for q in everything if q.split == spec.split]
    if spec.max_samples is not None:
        questions = questions[: spec.max_samples]
    return questions, check_questions(spec.archive, spec.task, everything, questions)


OPTIONS = ("A", "B")  # every question's two options: what Random draws from


def make_prompt(spec: RunSpec, question: Question, root: str | None = None) -> Prompt:
    # string paths, not pathlib or resolve(): no filesystem call per question
    root = root or os.path.abspath(spec.archive)
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
        key = (spec.archive, spec.task, spec.split, spec.max_samples)
        if key not in cache:  # checked once per command, not once per seed
            cache[key] = select_questions(spec)
        questions, n_audio = cache[key]
        if spec.archive not in cache:
            cache[spec.archive] = {"path": str(spec.archive), "absolute_path": os.path.abspath(spec.archive),
                                   "manifest_sha256": manifest_sha256(spec.archive),
                                   "benchmark": load_manifest(spec.archive).get("benchmark")}
        config = {"archive": cache[spec.archive], "n_questions": len(questions),
                  "pack_check": {"passed": True, "questions_file": f"{spec.task}/questions.jsonl",
                                 "questions": len(questions), "audio_files": n_audio},
                  "prompt_template_sha256": provenance.prompt_hash([q.prompt for q in questions])}
        root = os.path.abspath(spec.archive)
        return Prepared([(q, make_prompt(spec, q, root)) for q in questions], (), config)

    def grader(self, specs: list[RunSpec]) -> JudgeGrader:
        """The A/B judge every AcousticBench run of the command shares (made from the first run's judge settings)."""
        return JudgeGrader.for_specs(specs)

    def record_maker(self, spec: RunSpec, prepared: Prepared[Question], grader: JudgeGrader | None):
        judge = grader.judge if grader is not None else Judge("rules")

        async def to_record(question: Question, prompt: Prompt, outcome) -> Record:
            return make_record(question, prompt, spec.model, outcome, *await judge_outcome(judge, question, outcome))

        return to_record

    def relabeller(self, options: dict[str, Any]):
        """rejudge.py: the LLM judge's reading of every null answer that has text."""
        from acousticbench.benchmarks.acoustic.relabel import JudgeRelabeller

        return JudgeRelabeller(options)

    def warm_up(self) -> None:
        """The psychometric fit's module and numpy, imported in a worker thread while questions are out, so a run's
        end does not wait for them."""
        importlib.import_module("acousticbench.benchmarks.acoustic.psychometric")

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
        return compute_metrics(records, spec.model, spec.task, spec.seed)

    def summary_line(self, result) -> str:
        m = result.metrics
        s, st = m.scored, m.statuses
        acc = "n/a" if s.accuracy is None else f"{s.accuracy:.3f}"
        ci = f" [{s.wilson95.low:.3f}, {s.wilson95.high:.3f}]" if s.wilson95 else ""
        resumed = f", {result.resumed} kept from the interrupted run" if result.resumed else ""
        judge_errors = m.error_causes.get("judge", 0)
        causes = f" ({judge_errors} of them the judge's)" if judge_errors else ""
        cut = f"{st['truncated']} truncated (cut by the token limit), " if st.get("truncated") else ""
        return (f"{result.spec.label()}: accuracy {acc}{ci} over {s.n} scored questions; "
                f"{st.get('answered', 0)} answered, {st.get('unparsed', 0)} unparsed, {st.get('refused', 0)} refused, "
                f"{cut}{st.get('error', 0)} errors{causes}{resumed} -> {result.run_dir}")

    def headline(self, metrics: Any) -> tuple[float | None, int]:
        """Accuracy and the number of items it is over, for tables."""
        return metrics.scored.accuracy, metrics.scored.n

    def headline_stderr(self, metrics: Any) -> float | None:
        """The standard error of the headline accuracy (the sweep file's `stderr`)."""
        return metrics.scored.acc_stderr

    def scored(self, record: Record) -> bool:
        return record.kind == "scored"

    def spec_from_config(self, config: dict, **overrides: Any) -> RunSpec:
        data = {k: v for k, v in config["spec"].items() if k != "benchmark"}
        data["generation"] = GenerationConfig(**data.get("generation") or {})
        data["archive"], data["results_dir"] = Path(data["archive"]), Path(data["results_dir"])
        known = {f.name for f in fields(RunSpec)}  # an override another benchmark's spec has does not apply
        return RunSpec(**{**data, **{k: v for k, v in overrides.items() if v is not None and k in known}})

    def reference_keys(self) -> tuple[str, ...]:
        return ("id", "benchmark", "task", "split", "kind", "model", "seed", "response", "chosen", "answer", "correct",
                "status", "judge")


BENCHMARK = AcousticBenchmark()
