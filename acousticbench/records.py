"""The objects that go to disk or cross a module boundary: Question, Prompt, Reply, Judgement, Record, Metrics."""
from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Choice = Literal["A", "B"]
Split = Literal["train", "eval"]
Kind = Literal["scored", "diagnostic"]
Status = Literal["answered", "unparsed", "refused", "truncated", "error"]
JudgeMethod = Literal["rules", "llm", "none"]
JUDGE_FAILED = "judge failed"  # how a record's error starts when the LLM judge gave no verdict (its cause: 'judge')
# finish reasons that mean the token limit cut the reply: OpenAI and vLLM "length", Gemini MAX_TOKENS
CUT_FINISH = frozenset({"length", "max_tokens", "MAX_TOKENS"})


def was_cut(finish_reason: str | None) -> bool:
    """Did the backend stop the reply at its token limit (so whatever it said last may not be its answer)?"""
    return finish_reason in CUT_FINISH


def canonical_json(data: Any) -> bytes:
    """The byte form that checksums are computed over: sorted keys, no spaces, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Question(_Frozen):
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


class PromptPart(_Frozen):
    """One piece of a user turn: a text or an audio clip (absolute path), in the order the model receives them."""

    kind: Literal["text", "audio"]
    text: str | None = None
    audio: str | None = None


class Prompt(_Frozen):
    """What a backend is asked: the text and the audio files, resolved to absolute paths."""

    question_id: str
    task: str
    text: str
    audio: list[str] = Field(description="Absolute paths of the audio files, in order.")
    seed: int = Field(description="The run seed; backends that accept a seed get it.")
    parts: list[PromptPart] = Field(
        default_factory=list,
        description="The turn as interleaved text and audio where the order matters (AudioICL); empty for "
        "AcousticBench. `text` and `audio` always carry the same content flattened (the text names each clip "
        "'<audio N>'), for backends that send text and audio separately.",
    )


class Reply(_Frozen):
    """What a backend answered. A backend that fails raises BackendError instead of inventing a reply."""

    text: str | None = Field(description="The raw response text; None when the model gave no text.")
    refused: bool = Field(default=False, description="The provider or model declined to answer (refusal, safety block).")
    usage: dict[str, int] = Field(default_factory=dict, description="Token counts as the provider reported them.")
    model_id: str | None = Field(default=None, description="The model id the server says it used.")
    finish_reason: str | None = Field(default=None, description="Why generation stopped, as the backend says it "
                                      "('stop', 'length', Gemini's 'MAX_TOKENS'); null where a backend gives none.")
    notes: list[str] = Field(default_factory=list, description="What the backend changed about the input, e.g. merged clips.")


class Judgement(_Frozen):
    """How a response was turned into an option."""

    chosen: Choice | None
    status: Literal["answered", "unparsed", "refused", "truncated"]
    method: JudgeMethod = Field(description="rules: the strict extractor committed; llm: the judge model did; none: nobody did.")
    model: str | None = Field(default=None, description="The judge model, when method is 'llm'.")


class JudgeInfo(_Frozen):
    method: JudgeMethod
    model: str | None = None


class RecordBase(_Frozen):
    """What every line of every benchmark's responses.jsonl has; each benchmark adds its own fields."""

    id: str
    benchmark: str = Field(description="The benchmark the record belongs to: AcousticBench or AudioICL.")
    model: str
    task: str
    seed: int
    status: str = Field(description="answered, unparsed, refused, truncated (cut by the token limit) or error; a "
                        "failure is never scored as an answer.")
    response: str | None = Field(description="Raw response text, or null when the request failed.")
    finish_reason: str | None = Field(default=None, description="Why the backend stopped the reply ('stop', 'length'); "
                                      "null where it gives none, the request failed, or the run predates the field.")
    error: str | None = None
    attempts: int = 1
    latency_s: float | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list, description="What was changed about the input or the record: clips "
                             "merged with 1 s of silence, padded, re-asked, re-judged.")
    meta: dict[str, Any] = Field(default_factory=dict, description="The item's meta (level, probe type), so metrics "
                                 "need only this file.")


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


class Interval(_Frozen):
    low: float
    high: float


class SliceMetrics(_Frozen):
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
    answered: int
    truncated: int = Field(default=0, description="Replies cut by the token limit (status truncated, never scored).")
    errors: int = Field(default=0, description="Questions with no answer or no verdict (status error).")
    parse_failure_rate: float | None
    refusal_rate: float | None
    truncation_rate: float | None = None
    error_rate: float | None


class Diagnostics(_Frozen):
    """The diagnostic probes of one run: every n counts questions (one answer each)."""

    n_counts: Literal["questions"] = "questions"
    n_catch: int
    catch_accuracy: float | None = Field(description="Accuracy on the largest-difference trials: the task's practical ceiling.")
    n_identical: int
    identical_p_a: float | None = Field(description="P(chose A) on identical pairs among answered: 0.5 means no response bias.")
    n_swap_pairs: int
    swap_consistency: float | None = Field(description="Share of order-swapped twins where the answer followed the swap.")


class PsychometricFit(_Frozen):
    """Accuracy against difficulty level fitted by a two-alternative logistic, P(level) = guess + (1 - guess - lapse)
    / (1 + exp((level - midpoint) / spread)), guess 0.5, by maximum likelihood (scipy's L-BFGS-B); intervals from a
    parametric bootstrap. Level 1 is the easiest, so the curve falls with level and a higher threshold is better."""

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
    threshold_ci95: list[float] | None = Field(description="[low, high]: the 2.5 and 97.5 percentiles of the threshold "
                                              "over the bootstrap fits, clamped to the tested levels; null when the "
                                              "curve stays below the criterion (nothing to bootstrap).")
    threshold_ci95_beyond: list[bool] = Field(default_factory=lambda: [False, False], description="Whether each end "
                                              "of the interval lies beyond the tested levels (it is then the edge).")
    bootstrap: int = Field(description="Parametric bootstrap resamples (seeded, so the numbers are reproducible).")
    unit: str | None = Field(default=None, description="The physical unit of the levels' differences (the questions' "
                             "meta `unit`: semitones, dB, percent, degrees azimuth, count ratio).")
    steps: list[float | None] | None = Field(default=None, description="The difference between the clips at each level in "
                                      "`levels` (the questions' meta `step`), in `unit`.")
    threshold_physical: float | None = Field(default=None, description="The threshold as a difference in `unit`: "
                                             "the steps interpolated geometrically between the levels around it.")
    threshold_physical_ci95: list[float] | None = Field(default=None, description="The interval's ends in `unit`, "
                                                        "smaller difference first (the harder end).")
    n_counts: str = Field(default="questions", description="What `n` counts: questions (one run) or answers (seeds "
                          "pooled).")


class Metrics(_Frozen):
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
