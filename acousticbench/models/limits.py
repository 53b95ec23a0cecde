"""What one request to an open-weight model may carry (clips, clip length), and what the harness does with a prompt
over it: merge the clips into one with 1 s of silence (noted on the record), or refuse the run before it starts."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from acousticbench.core.errors import UserError
from acousticbench.core.wav import wav_layout

if TYPE_CHECKING:  # the registry imports this module: --help must not pay for pydantic's import
    from acousticbench.core.records import Prompt

MERGE_GAP_S = 1.0  # seconds of silence between merged clips


@dataclass(frozen=True)
class Limits:
    audio_items: int | None = None  # audio inputs per request; None: none known
    clip_s: float | None = None  # the longest clip it hears whole; None: none known
    over: Literal["merge", "refuse"] = "refuse"  # more clips than audio_items: merge them, or refuse the run
    why: str = ""  # where the numbers come from, for the refusal line and config.json

    @property
    def merge_over(self) -> int | None:
        """Merge a prompt's clips into one when it has more than this many; None: never merge."""
        return self.audio_items if self.over == "merge" else None

    def describe(self) -> dict:
        return asdict(self)


@lru_cache(maxsize=8192)  # twins and AudioICL demos reuse clips; reading a WAV header is all it costs
def clip_seconds(path: str) -> float:
    try:
        with open(path, "rb", buffering=0) as fh:  # one small read: a buffer would only be an extra copy
            head = fh.read(4096)
    except OSError:
        return 0.0  # a missing or unreadable clip is the pack check's to report, not this one's

    layout = wav_layout(head)
    if layout is not None and layout.rate and layout.block_align:
        return layout.data_size / layout.block_align / layout.rate
    import soundfile as sf  # not a plain WAV: ask libsndfile

    try:
        info = sf.info(path)
    except (OSError, RuntimeError):
        return 0.0
    return info.frames / info.samplerate if info.samplerate else 0.0


def seconds_sent(limits: Limits, paths: list[str]) -> list[float]:
    """The length of each audio input one request carries, as the harness would send it: one merged input when the
    prompt is over the limit."""
    lengths = [clip_seconds(p) for p in paths]
    if limits.merge_over is not None and len(paths) > limits.merge_over:
        return [sum(lengths) + MERGE_GAP_S * (len(lengths) - 1)]
    return lengths


def check_prompts(name: str, limits: Limits, prompts: list["Prompt"]) -> None:
    """Refuse, in one line, a run with a prompt the model cannot take as the harness would send it."""
    why = f" ({limits.why})" if limits.why else ""
    if limits.audio_items is not None and limits.over == "refuse":
        most = max(prompts, key=lambda p: len(p.audio), default=None)
        if most is not None and len(most.audio) > limits.audio_items:
            raise UserError(f"{name} takes at most {limits.audio_items} audio clips per request{why}; {most.question_id} "
                            f"({most.task}) carries {len(most.audio)}: run fewer shots or clips, or pick another model.")
    if limits.clip_s is None:
        return
    for prompt in prompts:
        sent = seconds_sent(limits, prompt.audio)
        longest = max(sent, default=0.0)
        if longest > limits.clip_s:
            merged = " once its clips are merged" if len(sent) < len(prompt.audio) else ""
            raise UserError(f"{name} hears at most {limits.clip_s:g} s of audio per input{why}; {prompt.question_id} "
                            f"would send {longest:.1f} s{merged}: shorten the clips or pick another model.")
