"""What the listening page and the run share, under one lock: the listener's setup, the calibration, and the question
asked now. The page's requests arrive on server threads; the run waits on the event loop for the answer."""
from __future__ import annotations

import asyncio
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from acousticbench.models.human import tone
from acousticbench.core.records import Prompt, Reply


class Refused(ValueError):
    """A request the page should not have sent (a stale question, a bad field): answered with `status` and the
    message, never taken as an answer."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass
class Asked:
    """The question on the page now, and the future the run waits on for its reply."""

    prompt: Prompt
    ordinal: int  # its place among the questions this session asks, from 1
    future: asyncio.Future
    since: float = field(default_factory=time.monotonic)


_LABEL = re.compile(r"Label: (\S.*)$", re.MULTILINE)


def _count(data: dict, key: str) -> int:
    value = data.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 10_000:
        raise Refused(f"{key} must be a whole number from 0 to 10000")
    return value


def _seconds(data: dict, key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1e7:
        raise Refused(f"{key} must be a number of seconds or null")
    return round(float(value), 3)


def _plays(data: dict, clips: int) -> dict[str, Any]:
    """plays (of the clips in order), clip_plays (each clip, sequence plays included) and the response time."""
    per_clip = data.get("clip_plays", [0] * clips)
    if not isinstance(per_clip, list) or len(per_clip) != clips:
        raise Refused(f"clip_plays must list {clips} counts")
    return {"plays": _count(data, "plays"), "clip_plays": [_count({"clip_plays": n}, "clip_plays") for n in per_clip],
            "response_time_s": _seconds(data, "response_time_s")}


class Listening:
    """One listening session: setup (the listener's id, the output device), then up to tone.MAX_ATTEMPTS calibration
    trials, then the run's questions one at a time. `ready` resolves once the calibration is over."""

    def __init__(self, loop: asyncio.AbstractEventLoop, seed: int, gap_s: float):
        self._lock = threading.Lock()
        self.loop, self.seed, self.gap_s = loop, seed, gap_s
        self.listener: str | None = None
        self.device: str | None = None
        self.attempts: list[dict[str, Any]] = []
        self._pair: tuple[list[bytes], str] | None = None
        self.ready: asyncio.Future = loop.create_future()
        self.asked: Asked | None = None
        self.planned = self.answered = 0
        self.finished = False

    # ---- the page's side (server threads) ----
    def state(self) -> dict[str, Any]:
        with self._lock:
            if self.finished:
                return {"stage": "done", "answered": self.answered}
            if self.listener is None:
                return {"stage": "setup"}
            if not self._calibrated():
                note = "That was not the louder tone: check the output device and the volume, then try again." \
                    if self.attempts else None
                return {"stage": "calibration", "id": self._calibration_id(), "kind": "choice", "clips": 2,
                        "text": tone.PROMPT, "gap_s": self.gap_s, "note": note}
            if self.asked is None:
                return {"stage": "waiting", "answered": self.answered}
            return {"stage": "question", **self._view(self.asked)}

    def setup(self, data: dict) -> None:
        listener, device = data.get("listener"), data.get("device") or ""
        if not isinstance(listener, str) or not listener.strip() or len(listener) > 200:
            raise Refused("give your listener id (a name, up to 200 characters)")
        if not isinstance(device, str) or len(device) > 200:
            raise Refused("the output device is a text of up to 200 characters")
        with self._lock:
            if self.listener is not None:
                raise Refused("the listener is already set for this run", 409)
            self.listener, self.device = listener.strip(), device.strip() or None

    def calibrate(self, data: dict) -> None:
        with self._lock:
            if self.listener is None or self._calibrated() or data.get("id") != self._calibration_id():
                raise Refused("this calibration trial is not the one on the page now: reload", 409)
            choice = data.get("choice")
            if choice not in ("A", "B"):
                raise Refused("choice must be A or B")
            louder = self._tone_pair()[1]
            self.attempts.append({"answer": louder, "chosen": choice, "correct": choice == louder, **_plays(data, 2)})
            self._pair = None
            if self._calibrated():
                self.loop.call_soon_threadsafe(_resolve, self.ready, True)

    def answer(self, data: dict) -> None:
        with self._lock:
            asked = self.asked
            if asked is None or data.get("id") != asked.prompt.question_id:
                raise Refused("this question is not the one asked now: reload", 409)
            facts = {**_plays(data, len(asked.prompt.audio)),
                     "time_on_question_s": round(time.monotonic() - asked.since, 3)}
            if asked.prompt.parts:  # an in-context episode: the typed (or picked) label is the reply's text
                text = data.get("text")
                if not isinstance(text, str) or not text.strip() or len(text) > 1000:
                    raise Refused("type an answer (up to 1000 characters)")
                reply = Reply(text=text.strip(), model_id="Human", human=facts)
            else:
                choice = data.get("choice")
                if choice not in ("A", "B"):
                    raise Refused("choice must be A or B")
                reply = Reply(text=choice, choice=choice, model_id="Human", human=facts)
            self.asked = None
            self.answered += 1
            self.loop.call_soon_threadsafe(_resolve, asked.future, reply)

    def clip(self, item_id: str, n: int) -> bytes | str:
        """Clip `n` of the trial on the page now: calibration tones as bytes, a question's clip as its file path."""
        with self._lock:
            if self.listener is not None and not self._calibrated() and item_id == self._calibration_id():
                clips = self._tone_pair()[0]
                if 0 <= n < len(clips):
                    return clips[n]
            elif self.asked is not None and item_id == self.asked.prompt.question_id and 0 <= n < len(self.asked.prompt.audio):
                return self.asked.prompt.audio[n]
        raise Refused("only the clips of the trial on the page now are served", 404)

    # ---- the run's side (event loop) ----
    async def ask(self, prompt: Prompt) -> Reply:
        future = self.loop.create_future()
        with self._lock:
            self.asked = Asked(prompt, self.answered + 1, future)
        try:
            return await future
        finally:
            with self._lock:
                if self.asked is not None and self.asked.future is future:  # cancelled (Ctrl-C): asked no more
                    self.asked = None

    def finish(self) -> None:
        with self._lock:
            self.finished, self.asked = True, None

    def calibration(self) -> dict[str, Any]:
        """For config.json: what the catch trial was, each attempt, and whether it was passed."""
        with self._lock:
            return {"kind": tone.WHAT, "attempts": list(self.attempts),
                    "passed": any(a["correct"] for a in self.attempts), "max_attempts": tone.MAX_ATTEMPTS}

    # ---- under the lock ----
    def _calibrated(self) -> bool:
        return any(a["correct"] for a in self.attempts) or len(self.attempts) >= tone.MAX_ATTEMPTS

    def _calibration_id(self) -> str:
        return f"calibration-{len(self.attempts) + 1}"

    def _tone_pair(self) -> tuple[list[bytes], str]:
        if self._pair is None:
            self._pair = tone.tone_pair(self.seed, len(self.attempts) + 1)
        return self._pair

    def _view(self, asked: Asked) -> dict[str, Any]:
        prompt = asked.prompt
        view = {"id": prompt.question_id, "ordinal": asked.ordinal, "planned": max(self.planned, asked.ordinal),
                "clips": len(prompt.audio), "gap_s": self.gap_s, "text": prompt.text}
        if not prompt.parts:
            return {**view, "kind": "choice"}
        parts, n = [], 0
        for part in prompt.parts:  # the turn as the model gets it: text, and a play button where each clip goes
            if part.kind == "audio":
                parts.append({"clip": n})
                n += 1
            elif part.text:
                parts.append({"text": part.text})
        labels = list(dict.fromkeys(m.strip() for m in _LABEL.findall(prompt.text)))
        return {**view, "kind": "text", "parts": parts, "labels": labels}


def _resolve(future: asyncio.Future, value: Any) -> None:
    if not future.done():
        future.set_result(value)
