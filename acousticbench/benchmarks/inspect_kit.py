"""A benchmark's runs as inspect_ai Tasks, built from the harness's own parts: its prepared prompts become Samples (the
clips as ContentAudio, in the order our backends send them) and its own record maker (AcousticBench's A/B judge,
AudioICL's strict scorer) labels what the model said, so a refusal or an unreadable reply is never scored as an answer.
Imported only by inspect (the `inspect_ai` entry point); run.py never loads inspect_ai."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentAudio, ContentText, ModelOutput
from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

from acousticbench.core.errors import UserError
from acousticbench.core.records import Prompt, Reply

# inspect's stop reasons in the words the harness's judge reads (a cut reply is never scored)
_FINISH = {"max_tokens": "length", "model_length": "length"}


PACK_HINT = "With inspect, -T archive=DIR names the pack folder."


def inspect_error(err: UserError, hint: str = "") -> Exception:
    """A harness user error as inspect prints it: its message alone, no traceback (inspect's PrerequisiteError)."""
    message = f"{err} {hint}".strip()
    try:
        from inspect_ai._util.error import PrerequisiteError
    except ImportError:  # another inspect version: the message still says what to fix
        return RuntimeError(message)
    return PrerequisiteError(message)


def audio_content(path: str) -> ContentAudio:
    """A clip for inspect: a WAV by its path (inspect inlines it); any other format re-encoded as WAV bytes, since
    ContentAudio only knows wav and mp3."""
    if path.lower().endswith(".wav"):
        return ContentAudio(audio=path, format="wav")
    import base64

    from acousticbench.models.wire import wav_bytes

    return ContentAudio(audio="data:audio/wav;base64," + base64.b64encode(wav_bytes(path)).decode(), format="wav")


def user_message(prompt: Prompt) -> ChatMessageUser:
    """The turn our backends send: interleaved parts where the order matters (AudioICL), else the clips then the text."""
    if prompt.parts:
        content = [ContentText(text=p.text or "") if p.kind == "text" else audio_content(p.audio or "")
                   for p in prompt.parts]
    else:
        content = [*(audio_content(a) for a in prompt.audio), ContentText(text=prompt.text)]
    return ChatMessageUser(content=content)


def outcome_of(output: ModelOutput):
    """What inspect's model returned, as the engine's Outcome: a failed call is an error, never an empty answer."""
    from acousticbench.engine.executor import Outcome

    if output.error:
        return Outcome(reply=None, error=output.error, attempts=1, latency_s=output.time)
    usage = output.usage.model_dump(exclude_none=True) if output.usage else {}
    reply = Reply(text=output.completion, refused=output.stop_reason == "content_filter",
                  finish_reason=_FINISH.get(output.stop_reason, output.stop_reason),
                  usage={k: v for k, v in usage.items() if isinstance(v, int)}, model_id=output.model or None)
    return Outcome(reply=reply, error=None, attempts=1, latency_s=output.time)


def score_of(record, label_field: str) -> Score:
    """Correct or incorrect only for an answered record; unparsed, refused, truncated and error are NOANSWER (0 in
    accuracy, as the harness counts them, and never an answer). The whole record rides along in the metadata."""
    if record.status == "answered":
        value = CORRECT if record.correct else INCORRECT
    else:
        value = NOANSWER
    label = getattr(record, label_field)
    why = record.status + (f": {record.error}" if record.error else "")
    return Score(value=value, answer=None if label is None else str(label), explanation=why,
                 metadata={"status": record.status, "record": record.model_dump(mode="json")})


def harness_scorer(record_maker: Callable, items: dict[str, tuple[Any, Prompt]], label_field: str):
    """The scorer of one task: the benchmark's own record maker over each sample's question and reply."""

    @scorer(metrics=[accuracy(), stderr()], name="harness_label")
    def harness_label():
        async def score(state: TaskState, target: Target) -> Score:
            item, prompt = items[str(state.sample_id)]
            return score_of(await record_maker(item, prompt, outcome_of(state.output)), label_field)

        return score

    return harness_label()


def make_task(bench, spec, name: str, target: Callable[[Any], str], keep: Callable[[Any], bool] = lambda item: True,
              metadata: dict[str, Any] | None = None) -> Task:
    """An inspect Task of one run spec: the items `keep` selects (in the harness's order), their prompts, and the
    benchmark's record maker as the scorer. The pack is checked first, as before any run."""
    try:
        prepared = bench.prepare(spec, {})
    except UserError as err:
        raise inspect_error(err, PACK_HINT) from None
    chosen = [(item, prompt) for item, prompt in prepared.items if keep(item)]
    samples = [Sample(id=item.id, input=[user_message(prompt)], target=target(item),
                      metadata={"task": prompt.task, "benchmark": bench.name}) for item, prompt in chosen]
    record_maker = bench.record_maker(spec, prepared, None)
    items = {item.id: (item, prompt) for item, prompt in chosen}
    return Task(dataset=MemoryDataset(samples, name=name), solver=generate(),
                scorer=harness_scorer(record_maker, items, bench.label_field),
                metadata={**(metadata or {}), **{k: v for k, v in prepared.config.items() if k == "archive"}})
