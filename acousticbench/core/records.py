"""The objects every benchmark shares that go to disk or cross a module boundary: Prompt, Reply, the record base,
intervals, decoding settings. Each benchmark's own items, records, labels and metrics live in its package."""
from __future__ import annotations

from dataclasses import dataclass

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_SEED = 42  # the run seed when none is given

# finish reasons that mean a token limit cut the reply, in any letter case: OpenAI, vLLM, llama.cpp and Ollama
# "length", Anthropic "max_tokens", Gemini MAX_TOKENS, OpenAI Responses "max_output_tokens", Mistral "model_length"
CUT_FINISH = frozenset({"length", "max_tokens", "max_output_tokens", "model_length"})


def was_cut(finish_reason: str | None) -> bool:
    """Did the backend stop the reply at its token limit (so whatever it said last may not be its answer)?"""
    return isinstance(finish_reason, str) and finish_reason.strip().lower() in CUT_FINISH


def canonical_json(data: Any) -> bytes:
    """The byte form that checksums are computed over: sorted keys, no spaces, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PromptPart(Frozen):
    """One piece of a user turn: a text or an audio clip (absolute path), in the order the model receives them."""

    kind: Literal["text", "audio"]
    text: str | None = None
    audio: str | None = None


class Prompt(Frozen):
    """What a backend is asked: the text and the audio files, resolved to absolute paths."""

    benchmark: str = Field(description="The benchmark the item belongs to, as acousticbench.benchmarks names it.")
    question_id: str
    task: str
    text: str
    audio: list[str] = Field(description="Absolute paths of the audio files, in order.")
    seed: int = Field(description="The run seed; backends that accept a seed get it.")
    parts: list[PromptPart] = Field(
        default_factory=list,
        description="The turn as interleaved text and audio where the order matters (in-context demos); empty "
        "where the text and the clips are all there is. `text` and `audio` always carry the same content flattened "
        "(the text names each clip '<audio N>'), for backends that send text and audio separately.",
    )
    # for the chance baselines only (models/baselines.py): no backend sends these to a model
    answer_space: list[str] = Field(default_factory=list, description="The answers the item allows, in a fixed order "
                                    "(two options, or a task's labels): what Random draws from.")
    demo_labels: list[str] = Field(default_factory=list, description="The answers the prompt's demos show, in the "
                                   "order shown (in-context demos): what Majority answers the most common of.")


AUDIO_NOT_RECEIVED = "audio not received"  # an error record's cause: the server counted far fewer audio tokens than sent


class Reply(Frozen):
    """What a backend answered. A backend that fails raises BackendError instead of inventing a reply."""

    text: str | None = Field(description="The raw response text; None when the model gave no text.")
    refused: bool = Field(default=False, description="The provider or model declined to answer (refusal, safety block).")
    usage: dict[str, int] = Field(default_factory=dict, description="Token counts as the provider reported them.")
    model_id: str | None = Field(default=None, description="The model id the server says it used.")
    finish_reason: str | None = Field(default=None, description="Why generation stopped, as the backend says it "
                                      "('stop', 'length', Gemini's 'MAX_TOKENS'); null where a backend gives none.")
    notes: list[str] = Field(default_factory=list, description="What the backend changed about the input, e.g. merged clips.")
    first_token_logprobs: dict[str, float] | None = Field(default=None, description="The first generated token's "
                                                          "most likely alternatives, {token text: logprob}, where the "
                                                          "server was asked for them (a benchmark that labels from them).")
    unreadable: str | None = Field(default=None, description="Why the text is no answer although it may read like "
                                   "one (a body that was not UTF-8: garbled on its way): never scored, kept as sent.")
    choice: str | None = Field(default=None, description="The option given directly (a person clicked it): the "
                               "label as it is, which the benchmark takes without reading the text.")
    human: dict[str, Any] | None = Field(default=None, description="How a person answered (the Human model): plays, "
                                         "response time.")


class RecordBase(Frozen):
    """What every line of every benchmark's responses.jsonl has; each benchmark adds its own fields."""

    id: str
    benchmark: str = Field(description="The benchmark the record belongs to, as acousticbench.benchmarks names it.")
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
    human: dict[str, Any] | None = Field(default=None, description="A person's answer (the Human model): `plays` of "
                                         "the clips in order, `clip_plays` of each alone, `response_time_s` from the "
                                         "end of the first full playback to the answer, `time_on_question_s`; null "
                                         "for models.")
    sent: list[dict[str, Any]] | None = Field(default=None, description="What the harness sent of each clip, in "
                                              "order: sr, channels, frames, duration_s and the sha256 of its bytes "
                                              "(an empty list: no audio); null in runs older than the field.")
    audio_tokens: dict[str, Any] | None = Field(default=None, description="Where the server reported the tokens it "
                                                "consumed: `expected` (the audio tokens of the seconds sent at the "
                                                "model's rate), `reported`, and `counted` (audio: the audio tokens "
                                                "apart; prompt: only the prompt's total, which holds them); null "
                                                "where it reported none or the model's rate is unknown.")

    def unscored(self, error: str):
        """This record as an error whose reply is kept to read but never scored (a benchmark clears its label)."""
        return self.model_copy(update={"status": "error", "error": error})

    def with_note(self, note: str):
        """This record with a note of what was done to it later (re-asked, re-judged, re-scored)."""
        return self.model_copy(update={"notes": [*self.notes, note]})


class Interval(Frozen):
    low: float
    high: float


@dataclass(frozen=True)
class GenerationConfig:
    """Decoding settings sent to backends that accept them; None means the backend's default."""

    temperature: float | None = None
    max_tokens: int | None = None
