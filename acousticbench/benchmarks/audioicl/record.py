"""What an AudioICL run writes: one EpisodeRecord per episode (responses.jsonl) and ICLMetrics (metrics.json)."""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from acousticbench.benchmarks.audioicl.episodes import Episode
from acousticbench.benchmarks.audioicl.scoring import Scoring, score, strict_correct
from acousticbench.core.refusal import is_refusal
from acousticbench.core.stats import accuracy_stderr, cell_interval, interval_method, wilson_interval
from acousticbench.core.records import Interval, Prompt, RecordBase, was_cut

EpisodeStatus = Literal["answered", "refused", "truncated", "error"]
FINAL_STATUSES = frozenset({"answered", "refused", "truncated"})  # --resume asks errors again


class EpisodeRecord(RecordBase):
    """One line of an AudioICL responses.jsonl: the episode, what the model said, and how it was scored."""

    benchmark: Literal["AudioICL"] = "AudioICL"
    id: str = Field(description="Episode id, e.g. 'AudioICL00001' (the same id at every k).")
    status: EpisodeStatus
    shots: int = Field(description="k: the number of demos the model saw.")
    prompt: str = Field(description="The turn as text; '<audio N>' marks where clip N was sent.")
    audio: list[str] = Field(description="The clips in the order sent, relative to the base folder where they lie under it.")
    prediction: str | None = Field(description="What the scorer read from the response; null when it found no answer.")
    gt: str = Field(description="The query's gold label as the metadata gives it.")
    correct: bool = Field(description="The harness's verdict: the public scorer's, and never for a refusal, a reply "
                          "cut by the token limit or an answer that names more than one label.")
    correct_public: bool | None = Field(default=None, description="The public scorer's verdict on the response "
                                        "whatever the status (eval_str.py's); null in records written before it.")
    scoring: Scoring = Field(description="strict: the public rules; lenient: number words accepted too.")
    demo_order: list[int] | None = Field(default=None, description="With --demo-order permuted: the demos' positions "
                                         "in the file, in the order shown; null: the file's order.")

    def unscored(self, error: str) -> "EpisodeRecord":
        """An error whose reply is kept, never counted correct."""
        return self.model_copy(update={"status": "error", "error": error, "correct": False, "correct_public": None})


def relative_audio(paths: list[str], base: Path) -> list[str]:
    root = os.path.abspath(base)
    return [os.path.relpath(p, root) if p.startswith(root + os.sep) else p for p in paths]


def make_episode_record(episode: Episode, prompt: Prompt, model: str, outcome, *, shots: int, scoring: Scoring,
                        base: Path, notes: tuple[str, ...] = ()) -> EpisodeRecord:
    """Join an episode and what came back (an engine Outcome) into the record that goes to disk."""
    reply = outcome.reply
    response = None if reply is None else reply.text
    prediction, public = score(episode.task, response, episode.gt, scoring)
    status = episode_status(reply)
    correct = status == "answered" and strict_correct(episode.task, response, episode.gt, scoring)
    return EpisodeRecord(
        id=episode.id, task=episode.task, shots=shots, model=model, seed=prompt.seed, prompt=prompt.text,
        audio=relative_audio(prompt.audio, base), response=response, prediction=prediction, gt=episode.gt,
        correct=correct, correct_public=public, status=status, error=outcome.error, attempts=outcome.attempts,
        latency_s=outcome.latency_s, usage={} if reply is None else dict(reply.usage), scoring=scoring,
        notes=[*notes, *([] if reply is None else reply.notes)],
        finish_reason=None if reply is None else reply.finish_reason, human=None if reply is None else reply.human,
    )


def line_outcome(line: Mapping[str, Any]) -> bool | None:
    """An EpisodeRecord as JSON (a responses.jsonl line, or a reference's copy of it): whether it was correct; every
    episode is scored."""
    return bool(line.get("correct"))


def episode_status(reply) -> EpisodeStatus:
    """error (no reply), refused (by the provider, or a reply that declines: 'I cannot listen to <audio 3>'),
    truncated (cut by the token limit), else answered."""
    if reply is None or reply.unreadable:  # no reply, or one garbled on its way: asked again by --resume
        return "error"
    if reply.refused or is_refusal(reply.text or ""):
        return "refused"
    return "truncated" if was_cut(reply.finish_reason) else "answered"


class ICLMetrics(BaseModel):
    """metrics.json of an AudioICL run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: Literal["AudioICL"] = "AudioICL"
    model: str
    task: str
    shots: int
    seed: int
    prompt_style: str
    scoring: Scoring
    n: int
    correct: int
    n_counts: Literal["episodes"] = "episodes"
    accuracy: float | None = Field(description="Correct / n (the strict verdict); an error, refusal, cut reply, hedge "
                                   "or unreadable answer counts as wrong.")
    accuracy_public: float | None = Field(default=None, description="The public scorer's verdicts / n: what "
                                          "eval_str.py and the paper report (refusals naming a label count).")
    accuracy_answered: float | None
    accuracy_without_errors: float | None = Field(default=None, description="Correct / (n - errors): server "
                                                  "failures left out.")
    wilson95: Interval | None = Field(description="Wilson 95% interval of `accuracy` over the n episodes.")
    ci95: Interval | None = Field(default=None, description="The 95% interval of `accuracy` to quote: `ci95_method`'s "
                                  "over the n episodes; null with n = 0 and in runs written before the field.")
    ci95_method: Literal["wilson", "clopper-pearson"] | None = Field(default=None, description="clopper-pearson (exact) "
                                                                     "where n < 100 episodes: Wilson's coverage dips "
                                                                     "under 95% there near 0 or 1 accuracy, the exact "
                                                                     "one's never does; wilson from 100 up.")
    # lm-eval's name; inspect_ai calls the same figure `stderr`
    acc_stderr: float | None = Field(default=None, description="Standard error of `accuracy` over the n episodes, "
                                     "sqrt(p(1 - p) / n) (acousticbench.core.stats.accuracy_stderr); null with n = 0 and "
                                     "in runs written before the field.")
    truncated: int = Field(default=0, description="Replies cut by the token limit (never credited).")
    no_answer_rate: float | None = Field(description="Share of the n episodes answered without an answer the scorer "
                                         "could find (over all episodes, as `truncated` and errors are; files "
                                         "without `no_answer` gave it over the answered ones).")
    no_answer: int | None = Field(default=None, description="Answered episodes where the scorer found no answer.")
    statuses: dict[str, int]
    tokens: dict[str, int] = Field(default_factory=dict, description="The provider's token counts summed over the "
                                   "records (what the run used), e.g. prompt_tokens, completion_tokens.")
    price_usd: float | None = Field(default=None, description="What those tokens cost at models/prices.py's table; "
                                    "null for models without a price.")
    price_basis: str | None = Field(default=None, description="The price used and when it was read, or why none.")
    audio_received: dict[str, int] = Field(default_factory=dict, description="Where the server reported the tokens "
                                           "it consumed: `checked` records, and `not_received`, those whose audio "
                                           "evidently did not arrive whole (errors of their own, never scored); "
                                           "`stereo_as_mono`, those whose stereo clip the canary found heard as "
                                           "mono.")
    listener: str | None = Field(default=None, description="The canary's mark where it found that the run's audio "
                                 "does not reach the model ('canary: the model did not hear ...'): the leaderboard and "
                                 "the report mark the run †; else null.")
    demo_order: str = Field(default="file", description="The demos in the file's order, or permuted per seed.")
    format_compliance: float | None = Field(default=None, description="Answered episodes whose reply is a label and "
                                            "nothing else, right or wrong, over the answered episodes.")
    format_compliance_n: int = Field(default=0, description="The answered episodes format_compliance is over.")


def icl_metrics(records: list[EpisodeRecord], *, model: str, task: str, shots: int, seed: int, prompt_style: str,
                scoring: Scoring) -> ICLMetrics:
    n = len(records)
    correct = sum(r.correct for r in records)
    answered = [r for r in records if r.status == "answered"]
    public = sum(bool(r.correct if r.correct_public is None else r.correct_public) for r in records)
    errors = sum(r.status == "error" for r in records)
    return ICLMetrics(
        model=model, task=task, shots=shots, seed=seed, prompt_style=prompt_style, scoring=scoring, n=n,
        correct=correct, accuracy=correct / n if n else None, accuracy_public=public / n if n else None,
        accuracy_without_errors=correct / (n - errors) if n > errors else None,
        truncated=sum(r.status == "truncated" for r in records),
        accuracy_answered=sum(r.correct for r in answered) / len(answered) if answered else None,
        wilson95=wilson_interval(correct, n),
        ci95=cell_interval(correct, n), ci95_method=interval_method(n) if n else None,
        acc_stderr=accuracy_stderr((r.id, float(r.correct)) for r in records),
        no_answer=sum(r.prediction is None for r in answered),
        no_answer_rate=sum(r.prediction is None for r in answered) / n if n else None,
        statuses=dict(sorted(Counter(r.status for r in records).items())),
    )
