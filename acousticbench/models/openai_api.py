"""OpenAI API audio chat models (GPT-4o audio preview, gpt-audio-mini, ...) through the openai SDK."""
from __future__ import annotations

import os
from typing import Any

import openai

from acousticbench.core.errors import BackendError, UserError
from acousticbench.models.chat_wire import public_url, redact
from acousticbench.models.openai_chat import ChatCompletionsBackend, classify, make_client, transport_errors
from acousticbench.models.redirects import Origins, moved_elsewhere, moved_root
from acousticbench.core.records import Prompt

KEY_VARIABLE, BASE_URL_VARIABLE = "OPENAI_API_KEY", "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
CURRENT_AUDIO_MODEL = "gpt-audio-mini"


def openai_key(name: str) -> str:
    """OPENAI_API_KEY, or a one-line error saying how to set it (before any request or results folder)."""
    key = os.environ.get(KEY_VARIABLE, "").strip()
    if not key:
        raise UserError(f"{name} needs {KEY_VARIABLE}: `export {KEY_VARIABLE}=sk-...` or put it in .env.")
    return key


class OpenAIAudio(ChatCompletionsBackend):
    """Chat completions with input_audio parts; the key from OPENAI_API_KEY, the base URL from OPENAI_BASE_URL."""

    backend_name = "openai"
    default_concurrency = 8

    def __init__(self, name: str, *, api_model: str, endpoint: str | None = None, temperature: float | None = None,
                 max_tokens: int | None = None, retired: str | None = None, **_ignored: Any):
        self.name, self.api_model, self.retired = name, api_model, retired
        self.temperature, self.max_tokens = temperature, max_tokens
        self._key = openai_key(name)
        self.base_url = (endpoint or os.environ.get(BASE_URL_VARIABLE) or DEFAULT_BASE_URL).rstrip("/")
        self._base_from = "--endpoint" if endpoint else BASE_URL_VARIABLE  # where a base URL not OpenAI's was set
        self._client: openai.AsyncOpenAI | None = None
        self.served_model_id: str | None = None
        self.origins = Origins(name, self.base_url)  # where the answers really came from, after any redirect

    def _gone(self) -> str:
        """The fix for a model the server does not serve; never the advice to ask for the model it just refused."""
        ours = self.base_url == DEFAULT_BASE_URL
        who = "the OpenAI API" if ours else f"the server at {public_url(self.base_url)} ({self._base_from})"
        when = f" (retired by OpenAI on {self.retired})" if self.retired else ""
        if self.api_model != CURRENT_AUDIO_MODEL:
            return (f"{who} does not serve {self.api_model!r}{when}: rerun with --api-model {CURRENT_AUDIO_MODEL} (a "
                    f"current audio model; results then differ from the paper's {self.name}) or pick another --model.")
        fix = ("check that the key's project may use it" if ours else
               "pass a model it serves with --api-model (GET /v1/models lists them)")
        return f"{who} does not serve {self.api_model!r}{when}: {fix}, or pick another --model."

    async def open(self) -> None:
        self._client = make_client(self.base_url, self._key, self.origins)
        try:
            with self.origins.opening():  # a server that moved: followed below, not a redirect of answers
                raw = await self._client.models.with_raw_response.retrieve(self.api_model)
            self.served_model_id = raw.parse().id
            self._follow(str(raw.url))
        except openai.NotFoundError:
            raise UserError(self._gone()) from None
        except openai.AuthenticationError:
            raise UserError(f"{public_url(self.base_url)} rejected {KEY_VARIABLE} (401): check or replace the key.") from None
        except (openai.APIConnectionError, *transport_errors()) as err:
            raise UserError(redact(f"{classify(err, public_url(self.base_url))}: check your network or "
                                   f"{BASE_URL_VARIABLE}.", [self._key])) from None
        except openai.APIStatusError:
            pass  # a key may chat without being allowed to list models; the questions will tell

    def _follow(self, final: str) -> None:
        """A server that redirects to another origin: every request goes there, and config.json names both."""
        moved = moved_root(self.base_url, final, f"/models/{self.api_model}")
        if self.origins.follow(moved):
            self.base_url = moved
            self._client = self._client.with_options(base_url=moved)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()

    def _pick(self) -> tuple[openai.AsyncOpenAI, str, int]:
        assert self._client is not None, "open() first"
        return self._client, f"{self.name} at {public_url(self.base_url)}", 0

    def _request(self, prompt: Prompt) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.api_model, "modalities": ["text"],
                                   "seed": prompt.seed}
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.max_tokens is not None:
            request["max_completion_tokens"] = self.max_tokens
        return request

    def _explain(self, error: BackendError, err: Exception) -> BackendError:
        """A model that is gone gets the fix, not the raw 404."""
        code = getattr(err, "code", None)
        if isinstance(err, openai.NotFoundError) or code == "model_not_found":
            return BackendError(self._gone(), retryable=False)
        return error

    def _secrets(self) -> list[str]:
        return [self._key]

    def provenance(self) -> dict:
        return {"backend": self.backend_name, "endpoint": public_url(self.base_url), "api_model": self.api_model,
                **moved_elsewhere([self.origins]),
                "served_model_id": self.served_model_id,
                "temperature": self.temperature if self.temperature is not None else "provider default",
                "max_completion_tokens": self.max_tokens, "seed": "passed per request (best effort)"}
