"""Per record, what the model received of its audio as its server counted it: the audio tokens the seconds sent make at
the model's rate beside those the server reported; a record whose audio evidently did not arrive whole is an error of
its own cause ("audio not received"), never scored as if heard, and asked again by --resume."""
from __future__ import annotations

from collections import Counter
from typing import Any

from acousticbench.core.records import AUDIO_NOT_RECEIVED
from acousticbench.models.audio_tokens import AudioTokens, reported


STEREO_AS_MONO = "stereo heard as mono: the canary's left and right probes got the same answer"


def accounted(record: Any, rate: AudioTokens | None, heard_mono: bool = False) -> Any:
    """The record with its audio tokens (expected, reported) where the server reported a count and the model's rate
    is known; an error when the server counted audio apart and far fewer tokens than were sent. With `heard_mono`
    (the canary found it), a record that sent a stereo clip is noted: a token count cannot show channels."""
    if heard_mono and any(clip["channels"] > 1 for clip in record.sent or ()):
        record = record.with_note(STEREO_AS_MONO)
    if rate is None or rate.per_s is None or record.status == "error" or not record.sent:
        return record  # an unknown rate judges nothing
    got = reported(record.usage, rate)
    if got is None:
        return record
    seconds = [clip["duration_s"] for clip in record.sent]
    expected = rate.expected(seconds)
    update: dict[str, Any] = {"audio_tokens": {"expected": expected, "reported": got, "counted": rate.counted}}
    # a count of the prompt's total holds text too, so only a count of the audio apart can show a loss; one token
    # per clip of slack for rounding
    if rate.counted == "audio" and got + len(seconds) < rate.least * expected:
        return record.model_copy(update=update).unscored(
            f"{AUDIO_NOT_RECEIVED}: the server counted {got} audio tokens where the {sum(seconds):g} s sent make "
            f"{expected} at {rate.per_s:g} per second ({rate.source.split(':')[0]}): a clip was cut or dropped "
            "before the model")
    return record.model_copy(update=update)


def counts(records: list) -> dict[str, Any]:
    """metrics.json's audio_received: the records checked (their server counted the audio apart), those whose audio
    did not arrive whole, those whose count is only the prompt's total (kept, never judged: vLLM's), and those whose
    stereo clip the model heard as mono."""
    counted = Counter((getattr(r, "audio_tokens", None) or {}).get("counted") for r in records)
    missing = sum(1 for r in records if r.status == "error" and (r.error or "").startswith(AUDIO_NOT_RECEIVED))
    mono = sum(1 for r in records if STEREO_AS_MONO in r.notes)
    found = {"checked": counted["audio"], "not_received": missing,
             **({"prompt_total_only": counted["prompt"]} if counted["prompt"] else {}),
             **({"stereo_as_mono": mono} if mono else {})}
    return {"audio_received": found} if counted["audio"] or counted["prompt"] or mono else {}


def rate_of(spec: Any) -> AudioTokens | None:
    """The registry's rate for the run's model; None for a model it does not know."""
    from acousticbench.core.errors import UserError
    from acousticbench.run.catalog import get_model

    try:
        return get_model(spec.model).audio_tokens
    except UserError:
        return None
