"""BenchmarkBase: everything of a benchmark but its run part has a default here. A new benchmark writes four members:
`name`, `prepare` (its items and the Prompt of each: what a question is and how to ask it), `read_answer` (the label a
reply gives: how to score it) and `ideal_observer` (the Oracle's answer). The defaults make each reply an AnswerRecord
(a failed request, a refusal, a cut reply and an unreadable one each with their own status, never scored as an
answer), PlainMetrics from them, and the plain views (views.py)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

from pydantic import BaseModel

from acousticbench.benchmarks.option import Option
from acousticbench.benchmarks.views import Views
from acousticbench.core.identity import Identity, harness_identity, identity_of
from acousticbench.core.records import Frozen, Prompt, RecordBase, was_cut
from acousticbench.core.refusal import is_refusal


class AnswerRecord(RecordBase):
    """A record of a benchmark that says nothing of its own: what it asked, the label read from the reply, the
    item's answer, and whether they match (None: not scored, as for every status but answered)."""

    prompt: str
    audio: list[str] = []
    chosen: str | None = None
    answer: str | None = None
    correct: bool | None = None


class PlainMetrics(Frozen):
    """metrics.json of a benchmark that says nothing of its own: accuracy over every record, where a failed, refused
    or unreadable answer counts as not correct (never credited), and how many records had each status."""

    benchmark: str
    model: str
    task: str
    seed: int
    n: int  # records: items of the run
    correct: int
    accuracy: float | None
    statuses: dict[str, int]
    tokens: dict[str, int] = {}
    price_usd: float | None = None
    price_basis: str | None = None


class BenchmarkBase:
    """Defaults for every member of the Benchmark protocol but its run part; a benchmark inherits them and overrides
    what it knows."""

    name: str
    item_noun = "items"
    record_type: type[RecordBase] = AnswerRecord
    final_statuses = frozenset({"answered", "unparsed", "refused", "truncated"})  # kept by --resume; errors asked again
    label_field = "chosen"  # the record field reference comparison and compare_runs match on

    def read_answer(self, item: Any, text: str) -> str | None:
        """The label a reply's text gives (None: none can be read), scored against the item's `answer` field."""
        raise NotImplementedError(f"{type(self).__name__} writes read_answer(item, text), or a record_maker of its own")

    def record_maker(self, spec: Any, prepared: Any, grader: Any) -> Callable[[Any, Prompt, Any], Awaitable[Any]]:
        """An AnswerRecord per reply, labelled by read_answer: a failed request is an error, a refusal refused, a reply
        cut by the token limit truncated; none of them, nor an unreadable reply, is scored."""
        async def to_record(item: Any, prompt: Prompt, outcome: Any) -> AnswerRecord:
            reply = outcome.reply
            text = reply.text if reply else None
            chosen = self.read_answer(item, text) if text else None
            status = ("error" if reply is None else "refused" if reply.refused or (not chosen and is_refusal(text or ""))
                      else "truncated" if was_cut(reply.finish_reason) else "answered" if chosen else "unparsed")
            answer = item.answer  # every item has one: what its reply is scored against
            return AnswerRecord(id=item.id, benchmark=self.name, model=spec.model, task=prompt.task, seed=spec.seed,
                                status=status, response=text, error=outcome.error, attempts=outcome.attempts,
                                latency_s=outcome.latency_s, usage=reply.usage if reply else {}, prompt=prompt.text,
                                audio=prompt.audio, finish_reason=reply.finish_reason if reply else None,
                                chosen=chosen if status == "answered" else None, answer=answer,
                                correct=chosen == answer if status == "answered" else None,
                                human=reply.human if reply else None)

        return to_record

    @cached_property
    def views(self) -> Views:
        """How its runs read in the leaderboard and the report: the plain model x task table, unless it gives its own."""
        return Views(self)

    metrics_type: type[BaseModel] = PlainMetrics

    def metrics(self, spec: Any, records: Sequence[Any]) -> Any:
        """PlainMetrics from each record's `correct` field (True counts; False, None and every failure do not)."""
        correct = sum(1 for r in records if r.correct is True)
        return PlainMetrics(benchmark=self.name, model=spec.model, task=spec.task, seed=spec.seed, n=len(records),
                            correct=correct, accuracy=correct / len(records) if records else None,
                            statuses=dict(Counter(r.status for r in records)))

    def headline(self, metrics: Any) -> tuple[float | None, int]:
        return metrics.accuracy, metrics.n

    def headline_text(self, metrics: Any) -> str | None:
        """What a run measured where that is no accuracy (headline's accuracy is then None), for the closing table and
        the sweep file; None: its accuracy is its figure."""
        return None

    def summary_line(self, result: Any) -> str:
        acc = "n/a" if result.metrics.accuracy is None else f"{result.metrics.accuracy:.3f}"
        return f"{result.spec.label()}: accuracy {acc} over {result.metrics.n} {self.item_noun} -> {result.run_dir}"

    # the run path's defaults: no grader to share, nothing slow to import, every record scored
    def grader(self, specs: list) -> None:
        return None

    def warm_up(self) -> None:
        return None

    def scored(self, record: RecordBase) -> bool:
        return True

    def headline_errors(self, metrics: Any) -> int:
        """The failed items (status error) among the n of `headline`, so that a count beside n counts that n."""
        return metrics.statuses.get("error", 0)

    def headline_stderr(self, metrics: Any) -> float | None:
        """The standard error of the headline accuracy: metrics.json's top-level `acc_stderr`, where it has one."""
        return getattr(metrics, "acc_stderr", None)

    def reference_keys(self) -> tuple[str, ...]:
        """What a reference run keeps of each record."""
        return ("id", "benchmark", "task", "model", "seed", "response", self.label_field, "correct", "status")

    def reference_line(self, record: dict[str, Any]) -> dict[str, Any]:
        """A record (as JSON) as a reference run keeps it: its reference_keys."""
        return {k: v for k, v in record.items() if k in self.reference_keys()}

    def same_item(self, record: Any, line: Mapping[str, Any]) -> bool:
        """Whether a run's record and a reference's line of the same id asked the same thing; an id names one item."""
        return True

    def own_items(self, config: dict[str, Any]) -> str | None:
        """The kind of run ('adaptive psi') whose items are its own, made as it went from its own answers, so that no
        other run's answers to the same ids are answers to them; None: its items are the pack's."""
        return None

    def own_items_of_line(self, line: Mapping[str, Any]) -> str | None:
        """own_items for a responses.jsonl (or a reference's file) without its config.json, from one of its records."""
        return None

    def made_as(self, config: dict[str, Any]) -> str | None:
        """How a run whose items are its own made them ('psi, 4 tracks x 60 trials'), from its config.json (or, before
        it runs, a config of its spec alone): runs made otherwise are not seeds of one cell, nor one reference, nor
        compared with one; None for a run of the pack."""
        return None

    def compare_own(self, task: str, a: tuple[dict[str, Any], list], b: tuple[dict[str, Any], list]) -> Any:
        """Two runs of `task` whose items are their own, each as (config.json, records), compared by what they
        measured: an object whose lines(name_a, name_b, one_run_each) `acousticbench compare` prints; None: none."""
        return None

    def listener_note(self, spec: Any, channels: int | None) -> dict[str, Any]:
        """metrics.json fields saying what a model that hears `channels` channels could not hear of the run; none."""
        return {}

    # no options of its own on rejudge.py and rerun_nones.py
    relabel_options: tuple[Option, ...] = ()
    rerun_options: tuple[Option, ...] = ()
    subset_options: tuple[str, ...] = ()  # options choosing which of the pack's items a run asks; none

    def relabeller(self, options: dict[str, Any]):
        from acousticbench.core.errors import UserError

        raise UserError(f"rejudge.py cannot label {self.name} answers again: its benchmark has no relabeller.")

    def outcome(self, line: Mapping[str, Any]) -> bool | None:
        """A record as JSON (a responses.jsonl line, or a reference's copy of it): every record scored, correct where
        its `correct` is true."""
        return bool(line.get("correct"))

    def identity(self, config: dict[str, Any]) -> Identity:
        """What its runs of one model must share to be averaged: the harness's part only (API model, served model)."""
        return identity_of(harness_identity(config))

    def swapped(self, item: Any, sent: Any) -> Any:
        """The item as --control swap asks it (its key the one of the clips as sent); a benchmark that cannot say
        refuses the control."""
        from acousticbench.core.errors import UserError

        raise UserError(f"--control swap needs to know what the swapped clips ask, and {self.name} cannot say: drop "
                        "swap for its tasks.")

    def variants(self, config: dict[str, Any]) -> Identity:
        """Its settings off their defaults that make a run another thing than the plain run; none."""
        return ()

    def recorded_settings(self, config: dict[str, Any]) -> dict[str, Any]:
        """The settings() an earlier run's config.json recorded, which --resume compares (older runs: the spec)."""
        return config.get("settings") or config.get("spec", {})

    def n_records(self, config: dict[str, Any]) -> int:
        """How many records a finished run's responses.jsonl holds, from its config.json (its Prepared.config's
        'n_items'; 0: not known, only a torn last line is caught)."""
        return config.get("n_items") or 0

