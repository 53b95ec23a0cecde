"""AcousticBench as a Benchmark: A/B questions of a pack, judged into Records (rules first, the LLM judge after)."""
from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from acousticbench.core import provenance
from acousticbench.benchmarks.acoustic.pack import RUN_MADE, load_manifest, load_questions, manifest_sha256
from acousticbench.benchmarks import Prepared
from acousticbench.benchmarks.option import Option
from acousticbench.benchmarks.acoustic.judge.modes import DEFAULT_JUDGE_MODEL
from acousticbench.benchmarks.acoustic.views import AcousticViews
from acousticbench.benchmarks.base import BenchmarkBase
from acousticbench.core.identity import Identity, harness_identity, identity_of
from acousticbench.benchmarks.acoustic.pack.trust import check_questions
from acousticbench.benchmarks.acoustic.judge.grader import JudgeGrader
from acousticbench.benchmarks.acoustic.judge import Judge
from acousticbench.benchmarks.acoustic.judge.into_record import INTERRUPTED_NOTE, judge_outcome, make_record
from acousticbench.benchmarks.acoustic.metrics import compute_metrics
from acousticbench.core.records import Prompt
from acousticbench.benchmarks.acoustic.records import Metrics, Question, Record, line_outcome
from acousticbench.benchmarks.acoustic.judge.relabel import REJUDGED
from acousticbench.core.errors import UserError
from acousticbench.core.settings import RunSpec
from acousticbench.core.stats import interval_text
from acousticbench.engine.executor import KeptOnInterrupt


def select_questions(spec: RunSpec) -> tuple[list[Question], int]:
    """The split's questions in canonical id order, cut to --max-samples, after the pack check (archive/trust.py):
    the questions file, these questions and their audio are what the pack pinned, every path inside the pack.
    Returns them and the number of audio files checked."""
    if load_manifest(spec.settings.archive).get("benchmark") == RUN_MADE:
        raise UserError(f"{spec.settings.archive} holds an adaptive run's own trials (each placed by that run's "
                        "answers), not a task's questions: pass the benchmark pack (--archive archive), or look at "
                        "the run with `acousticbench report`.")
    everything = load_questions(spec.settings.archive, spec.task)
    questions = everything if spec.options.split == "all" else [q for q in everything if q.split == spec.options.split]
    if spec.settings.max_samples is not None:
        questions = questions[: spec.settings.max_samples]
    return questions, check_questions(spec.settings.archive, spec.task, everything, questions)


OPTIONS = ("A", "B")  # every question's two options: what Random draws from


def make_prompt(spec: RunSpec, question: Question, root: str | None = None) -> Prompt:
    # string paths, not pathlib or resolve(): no filesystem call per question
    root = root or os.path.abspath(spec.settings.archive)
    audio = [os.path.normpath(os.path.join(root, rel)) for rel in question.audio]
    return Prompt(benchmark=AcousticBenchmark.name, question_id=question.id, task=question.task, text=question.prompt,
                  audio=audio, seed=spec.seed, answer_space=list(OPTIONS))


class AcousticBenchmark(BenchmarkBase):
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

    @cached_property
    def views(self) -> AcousticViews:
        return AcousticViews(self)

    def n_records(self, config: dict[str, Any]) -> int:
        return config.get("n_questions") or 0

    def outcome(self, line: Mapping[str, Any]) -> bool | None:
        return line_outcome(line)

    def identity(self, config: dict[str, Any]) -> Identity:
        """How the answers were judged (mode; the model where the LLM judged, the rules' version where they did; the
        judge models rejudge.py read null answers with since, and another judge a rerun was told to use), then the
        harness's part."""
        judge = config.get("judge") or {}
        mode = judge.get("mode")
        history = config.get("history") or []
        again = [h["what"].removeprefix(REJUDGED) for h in history
                 if str(h.get("what", "")).startswith(REJUDGED)]  # relabel.py's own words for what it did
        again += [f"the {h['settings']['judge']} judge of a rerun" for h in history  # rerun told another judge
                  if isinstance(h.get("settings"), dict) and h["settings"].get("judge")]
        return identity_of({"judge": mode, "judge model": judge.get("model") if mode in ("auto", "llm") else None,
                            "rules": judge.get("rules_version") if mode in ("auto", "rules") else None,
                            "rejudged by": ", ".join(dict.fromkeys(again)),
                            "adaptive": self.made_as(config), **harness_identity(config)})

    def recorded_settings(self, config: dict[str, Any]) -> dict[str, Any]:
        """The settings an earlier run recorded, and the pack it ran on (its manifest's sha256, from the `archive`
        section of Prepared.config): --resume never mixes two versions of a pack in one run."""
        pack = (config.get("archive") or {}).get("manifest_sha256")
        return {**super().recorded_settings(config), **({"pack_manifest_sha256": pack} if pack else {})}

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

    subset_options = ("split",)  # --split: which half of the pack a run asks
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
        from acousticbench.benchmarks.acoustic.judge.relabel import JudgeRelabeller

        return JudgeRelabeller(options)

    def warm_up(self) -> None:
        """The psychometric fit's module and numpy, imported in a worker thread while questions are out, so a run's
        end does not wait for them."""
        importlib.import_module("acousticbench.benchmarks.acoustic.metrics.psychometric")

    def swapped(self, question: Question, sent: Prompt) -> Question:
        """The question as --control swap asks it: its clips in the order sent (a stereo clip: the one with its
        channels exchanged, by its absolute path) and its key the other option (the first clip is now the second,
        the left the right), so its records score what was heard."""
        audio = question.audio[::-1] if len(question.audio) == 2 else list(sent.audio)  # the pack's, or the cache's
        other = {"A": "B", "B": "A"}
        return question.model_copy(update={"audio": audio, "answer": other.get(question.answer or "")})

    def ideal_observer(self, prompt: Prompt) -> str:
        """The Oracle's answer: the attribute measured from the waveforms (oracle.py)."""
        from acousticbench.benchmarks.acoustic.ideal_observer import observe

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

        options, scored = spec.options, metrics.scored
        planned = options.adaptive_tracks * options.adaptive_trials
        found = adaptive_threshold(spec.task, options.adaptive, records, planned)
        # trials placed near 75% correct for every model are no accuracy: only the counts of the answers are kept
        counts = scored.model_copy(update=dict.fromkeys(("accuracy", "accuracy_answered", "accuracy_without_errors",
                                                         "wilson95", "ci95", "ci95_method", "acc_stderr")))
        return metrics.model_copy(update={"adaptive": found, "scored": counts, "by_split": {}, "by_level": {}})

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

            statuses = {k: m.statuses.get(k, 0) for k in ("answered", "unparsed", "refused", "truncated", "error")}
            unread = f" ({_status_counts(statuses)}: an answer that is not an option counts as wrong)" \
                if statuses["answered"] < sum(m.statuses.values()) else ""  # e.g. a model whose every reply is prose
            return f"{result.spec.label()}: {summary_line(m.adaptive)}{unread}{resumed} -> {result.run_dir}"
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
        """Accuracy and the number of items it is over, for tables; an adaptive run has none (its trials were placed
        for it to be near 75%, whatever the model), only its threshold (headline_text)."""
        return (None if metrics.adaptive is not None else metrics.scored.accuracy), metrics.scored.n

    def headline_text(self, metrics: Any) -> str | None:
        """An adaptive run's threshold: 'threshold 0.42 semitones [0.31, 0.57]', or 'threshold not reached'."""
        found = metrics.adaptive
        if found is None:
            return None
        from acousticbench.benchmarks.acoustic.adaptive.threshold import threshold_text

        return f"threshold {threshold_text(found) or 'not reached'}"

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

    def reference_line(self, record: dict[str, Any]) -> dict[str, Any]:
        """An adaptive trial keeps where it was placed (meta.adaptive): the same id is another trial in a run whose
        answers differ."""
        line = super().reference_line(record)
        placed = (record.get("meta") or {}).get("adaptive")
        return {**line, "meta": {"adaptive": placed}} if placed is not None else line

    def same_item(self, record: Record, line: Mapping[str, Any]) -> bool:
        """An adaptive trial is the reference's only where it was placed alike (its clips follow from its seed, track,
        trial and difference); a pack's question is its id."""
        return record.meta.get("adaptive") == (line.get("meta") or {}).get("adaptive")

    def own_items(self, config: dict[str, Any]) -> str | None:
        method = (config.get("adaptive") or {}).get("method")
        return f"adaptive {method}" if method else None

    def own_items_of_line(self, line: Mapping[str, Any]) -> str | None:
        placed = (line.get("meta") or {}).get("adaptive")
        return f"adaptive {placed.get('method')}" if isinstance(placed, dict) else None

    def made_as(self, config: dict[str, Any]) -> str | None:
        """'psi, 4 tracks x 60 trials', from the spec (a run's, or one not run yet): a 4-trial run is not another seed
        of a 240-trial one, nor does it replace it."""
        spec = config.get("spec") or {}
        if not spec.get("adaptive"):
            return None
        tracks, width = spec["adaptive_tracks"], spec.get("adaptive_width")
        return (f"{spec['adaptive']}, {tracks} track{'s' if tracks != 1 else ''} x {spec['adaptive_trials']} trials"
                + (f", stops at width {width:g}" if width else ""))

    def compare_own(self, task: str, a: tuple[dict[str, Any], list], b: tuple[dict[str, Any], list]) -> Any:
        """Two adaptive runs by their thresholds (adaptive/compare.py)."""
        from acousticbench.benchmarks.acoustic.adaptive.compare import compare_thresholds

        return compare_thresholds(task, a, b)


BENCHMARK = AcousticBenchmark()


def _status_counts(counts: dict[str, int]) -> str:
    """'380 answered, 1 unparsed, 2 refused, 10 truncated (cut by the token limit), 7 errors' (truncated only where
    there are any)."""
    cut = f"{counts['truncated']} truncated (cut by the token limit), " if counts["truncated"] else ""
    return (f"{counts['answered']} answered, {counts['unparsed']} unparsed, {counts['refused']} refused, {cut}"
            f"{counts['error']} errors")
