"""AcousticBench's objects on disk: a pack's Question, how the judge labelled a reply, a responses.jsonl Record, and
metrics.json."""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from acousticbench.core.records import Frozen, Interval, RecordBase, canonical_json

Choice = Literal["A", "B"]
JudgeMethod = Literal["rules", "llm", "logprobs", "direct", "none"]
JUDGE_FAILED = "judge failed"  # how a record's error starts when the LLM judge gave no verdict (its cause: 'judge')
Split = Literal["train", "eval"]
Kind = Literal["scored", "diagnostic"]
Status = Literal["answered", "unparsed", "refused", "truncated", "error"]


class Question(Frozen):
    """One benchmark question as stored in `<task>/questions.jsonl`."""

    id: str = Field(description="Stable id, task code and number: 'rad_0001'.")
    task: str = Field(description="Task code, e.g. 'rad'.")
    split: Split = Field(description="Which half of the task the question belongs to.")
    kind: Kind = Field(description="'scored' counts in accuracy; 'diagnostic' measures bias and ceiling.")
    prompt: str = Field(description="The question text the model sees, options included.")
    audio: list[str] = Field(description="Audio files, relative to the archive root, in the order the model hears them.")
    answer: Choice | None = Field(description="The correct option; null where no option is correct (identical pairs).")
    meta: dict[str, Any] = Field(default_factory=dict, description="Attribute, level, probe type and physical parameters.")
    sha256: dict[str, str] = Field(default_factory=dict, description="SHA-256 hex of each audio file, keyed by its path.")
    checksum: str = Field(default="", description="SHA-256 of the canonical JSON of this question without this field.")

    def compute_checksum(self) -> str:
        return hashlib.sha256(canonical_json(self.model_dump(exclude={"checksum"}))).hexdigest()

    def sealed(self) -> "Question":
        """This question with its checksum filled in."""
        return self.model_copy(update={"checksum": self.compute_checksum()})


class Judgement(Frozen):
    """How a response was turned into an option."""

    chosen: Choice | None
    status: Literal["answered", "unparsed", "refused", "truncated"]
    method: JudgeMethod = Field(description="rules: the strict extractor committed; llm: the judge model did; "
                                "logprobs: P(A) against P(B) as the first token; direct: the option was given as "
                                "such (a person clicked it), no judge; none: nobody did.")
    model: str | None = Field(default=None, description="The judge model, when method is 'llm'.")
    logprobs: dict[str, float | None] | None = Field(default=None, description="method logprobs: the log probability "
                                                     "of 'A' and of 'B' as the first token (null: not among the "
                                                     "server's top alternatives).")


class JudgeInfo(Frozen):
    method: JudgeMethod
    model: str | None = None


class Record(RecordBase):
    """One line of an AcousticBench responses.jsonl: a question, what the model said, and how it was judged."""

    benchmark: Literal["AcousticBench"] = "AcousticBench"
    status: Status
    split: Split
    kind: Kind
    prompt: str
    audio: list[str]
    chosen: Choice | None = Field(description="The option the model committed to, or null.")
    answer: Choice | None
    correct: bool | None = Field(description="null when the question has no correct option.")
    judge: JudgeInfo
    logprobs: dict[str, float | None] | None = Field(default=None, description="--judge logprobs: the log probability "
                                                     "of 'A' and of 'B' as the first answer token, which the label "
                                                     "came from (null: not among the server's top alternatives).")

    def unscored(self, error: str) -> "Record":
        """An error whose reply is kept: no option chosen, not correct (None where no option is)."""
        return self.model_copy(update={"status": "error", "error": error, "chosen": None,
                                       "correct": None if self.correct is None else False})


def line_outcome(line: Mapping[str, Any]) -> bool | None:
    """A Record as JSON (a responses.jsonl line, or a reference's copy of it): whether it was correct, None for a
    diagnostic question (never scored; lines written before `kind` are scored)."""
    return bool(line.get("correct")) if line.get("kind", "scored") == "scored" else None


class SliceMetrics(Frozen):
    """Accuracy and outcome rates over one set of scored records (of one run: n counts questions, one answer each)."""

    n: int = Field(description="Scored questions (one run: one answer each).")
    n_counts: Literal["questions"] = "questions"
    correct: int
    accuracy: float | None = Field(description="Correct / n; a null answer (unparsed, refused, truncated, error) "
                                   "counts as wrong, as in the paper.")
    accuracy_answered: float | None = Field(description="Correct / answered.")
    accuracy_without_errors: float | None = Field(default=None, description="Correct / (n - errors): the accuracy "
                                                  "with infrastructure failures (server, judge) left out.")
    wilson95: Interval | None = Field(description="Wilson 95% interval of `accuracy` over the n questions.")
    ci95: Interval | None = Field(default=None, description="The 95% interval of `accuracy` to quote: `ci95_method`'s "
                                  "over the n questions; null with n = 0 and in runs written before the field.")
    ci95_method: Literal["wilson", "clopper-pearson"] | None = Field(default=None, description="clopper-pearson (exact) "
                                                                     "where n < 100, as in a level's slice: Wilson's "
                                                                     "coverage dips under 95% there near 0 or 1 "
                                                                     "accuracy, the exact one's never does; wilson "
                                                                     "from 100 questions up.")
    # lm-eval's name; inspect_ai calls the same figure `stderr`
    acc_stderr: float | None = Field(default=None, description="Standard error of `accuracy` over the n questions, "
                                     "sqrt(p(1 - p) / n) (acousticbench.core.stats.accuracy_stderr); null with n = 0 and "
                                     "in runs written before the field.")
    answered: int
    truncated: int = Field(default=0, description="Replies cut by the token limit (status truncated, never scored).")
    errors: int = Field(default=0, description="Questions with no answer or no verdict (status error).")
    parse_failure_rate: float | None
    refusal_rate: float | None
    truncation_rate: float | None = None
    error_rate: float | None


class Diagnostics(Frozen):
    """The diagnostic probes of one run (one answer per question)."""

    n_counts: Literal["questions"] = Field(default="questions", description="n_catch and n_identical count "
                                           "questions; n_swap_pairs pairs of questions; n_position_wrong answers.")
    n_catch: int
    catch_accuracy: float | None = Field(description="Accuracy on the largest-difference trials: the task's practical ceiling.")
    n_identical: int
    identical_p_a: float | None = Field(description="P(chose A) on identical pairs among answered: 0.5 means no response bias.")
    n_swap_pairs: int
    swap_consistency: float | None = Field(description="Share of order-swapped twins, both answered, where the answer "
                                           "followed the swap. Mostly ability, not bias: a listener that hears 40% "
                                           "of the differences and guesses evenly otherwise scores about 0.6.")
    n_position_wrong: int = Field(default=0, description="Wrong answers naming an option on the order-swapped pairs "
                                  "(both members of each pair: one keyed A, one B): what `position_p_a` is over.")
    position_p_a: float | None = Field(default=None, description="Position bias: P(chose A) among those wrong answers "
                                       "(A: the first clip; in dir, the left). Each pair has one A- and one B-keyed question, so "
                                       "ability cancels: 0.5 means no position bias, 0.7 a listener that guesses A "
                                       "70% of the time; null without a wrong answer, and in runs "
                                       "written before the field.")


class PsychometricFit(Frozen):
    """Accuracy against difficulty level fitted by a two-alternative logistic, P(level) = guess + (1 - guess - lapse)
    / (1 + exp((level - midpoint) / spread)), guess 0.5, by maximum likelihood (a bounded Newton fit); the threshold's
    interval from its posterior over a grid of the three parameters (flat priors). Level 1 is the easiest, so the curve
    falls with level and a higher threshold is better."""

    levels: list[int] = Field(description="The difficulty levels with scored questions, easiest first.")
    n: list[int] = Field(description="Scored questions at each level.")
    correct: list[int] = Field(description="Correct answers at each level (a null answer counts as wrong).")
    guess: float = Field(description="The fixed guess rate: 0.5 for two options.")
    midpoint: float = Field(description="The level at which the curve is halfway from its top (1 - lapse) to guessing.")
    spread: float = Field(description="How many levels the curve takes to fall by a logistic unit; small is steep.")
    lapse: float = Field(description="The fitted rate of misses at no difficulty, between 0 and the bound `lapse_max`.")
    lapse_max: float
    criterion: float = Field(description="The accuracy the threshold is defined by: 0.75.")
    threshold: float | None = Field(description="The level at which the fitted curve falls to `criterion`; null when it "
                                    "does not cross it within the tested levels (see `threshold_note`).")
    threshold_side: Literal["above", "below"] | None = Field(default=None, description="When there is no threshold: "
                                                             "the curve stays above or below the criterion at every "
                                                             "tested level; null when it crosses it.")
    threshold_note: str | None = Field(description="Why there is no threshold: above or below the criterion at every "
                                       "tested level.")
    threshold_ci95: list[float] | None = Field(description="[low, high]: the 2.5 and 97.5 percentiles of the "
                                              "threshold's posterior (`interval_method`), clamped to the tested levels; "
                                              "null when the curve stays below the criterion.")
    threshold_ci95_beyond: list[bool] = Field(default_factory=lambda: [False, False], description="Whether each end "
                                              "of the interval lies beyond the tested levels (it is then the edge).")
    bootstrap: int = Field(default=0, description="Parametric bootstrap resamples behind `threshold_ci95` in files "
                           "written before the posterior interval; 0 since.")
    interval_method: Literal["posterior", "bootstrap"] | None = Field(default="bootstrap", description="How "
                                                                      "`threshold_ci95` was found: `posterior`, the "
                                                                      "central 95% of the threshold's posterior, slope "
                                                                      "and lapse rate integrated out under flat priors "
                                                                      "(covers the truth in 89-100% of simulated runs); "
                                                                      "`bootstrap`, a parametric bootstrap (files "
                                                                      "written before: 69-97%, by task); null "
                                                                      "without an interval.")
    unit: str | None = Field(default=None, description="The physical unit of the levels' differences (the questions' "
                             "meta `unit`: semitones, dB, percent, degrees azimuth, count ratio).")
    steps: list[float | None] | None = Field(default=None, description="The difference between the clips at each "
                                             "level in `levels` (the questions' meta `step`), in `unit`.")
    threshold_physical: float | None = Field(default=None, description="The threshold as a difference in `unit`: "
                                             "the steps interpolated geometrically between the levels around it.")
    threshold_physical_ci95: list[float] | None = Field(default=None, description="The interval's ends in `unit`, "
                                                        "smaller difference first (the harder end).")
    n_counts: str = Field(default="questions", description="What `n` counts: questions (one run) or answers (seeds "
                          "pooled).")

    def censored(self, physical: bool) -> tuple[str, float] | None:
        """The threshold as a censored value (core/stats.py): ('=', value), or past the end of what was tested where
        the curve never crosses the criterion (always above: '>' the hardest level, '<' the smallest difference;
        always below: the other way); in levels, or in `unit` when `physical`; None where there is none to give."""
        if physical and (not self.unit or not self.steps or None in self.steps):
            return None
        if self.threshold is None:
            if self.threshold_side is None:
                return None
            above = self.threshold_side == "above"
            if physical:
                return ("<", min(self.steps)) if above else (">", max(self.steps))
            return (">", float(max(self.levels))) if above else ("<", float(min(self.levels)))
        value = self.threshold_physical if physical else self.threshold
        return None if value is None else ("=", value)

    def interval_text(self, physical: bool) -> str:
        """The 95% interval, censored where it is: '[0.21, 0.35]', '[< 0.2, 0.31]' (an end past the tested
        range, then its edge), in levels or in `unit`; '' without one or where both ends lie past the tested range."""
        beyond = self.threshold_ci95_beyond
        if not self.threshold_ci95 or all(beyond):
            return ""
        if not physical:
            edges = [f"< {min(self.levels)}", f"> {max(self.levels)}"]
            return "[" + ", ".join(edges[e >= max(self.levels)] if out else f"{e:.2f}"
                                   for e, out in zip(self.threshold_ci95, beyond)) + "]"
        if not self.threshold_physical_ci95:
            return ""
        small, large = self.threshold_physical_ci95  # the smaller difference is the harder end: the higher level's
        return (f"[{'< ' if beyond[1] else ''}{small:.3g}, {'> ' if beyond[0] else ''}{large:.3g}]")


class Metrics(Frozen):
    """metrics.json of an AcousticBench run."""

    benchmark: Literal["AcousticBench"] = "AcousticBench"
    model: str
    task: str
    seed: int
    scored: SliceMetrics
    by_split: dict[str, SliceMetrics]
    by_level: dict[str, SliceMetrics]
    diagnostics: Diagnostics
    judge_methods: dict[str, int] = Field(description="How many labels came from each judge method.")
    statuses: dict[str, int]
    error_causes: dict[str, int] = Field(default_factory=dict, description="Errors by cause: request (the model "
                                         "gave no answer) or judge (the LLM judge gave no verdict).")
    psychometric: PsychometricFit | None = Field(default=None, description="Accuracy by level fitted by a psychometric "
                                                 "function, with the 75%-correct threshold; null with under 3 levels.")
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
    adaptive: Any = Field(default=None, description="An adaptive run's threshold (adaptive/threshold.py: "
                          "AdaptiveThreshold); null for a run of the pack.")
    listener: str | None = Field(default=None, description="'mono listener: chance by construction' when the task "
                                 "needs a stereo listener (dir) and the model hears one channel; such a run is left "
                                 "out of the average across tasks.")
