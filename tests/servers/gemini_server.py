"""A Gemini API server (generateContent and models.get, as google-genai sends them), faults from a FaultPlan."""
from __future__ import annotations

import base64
import io
import json
import math
import re

from servers.ear import Mangle, canary_answer
from servers.local import FaultPlan, Handler, LocalServer, answer_for, sha256

ROUTE = re.compile(r"^/(v1|v1beta)/models/([^/:]+)(:generateContent)?$")
ERRORS = {
    "429": (429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    "500": (500, "INTERNAL", "An internal error has occurred."),
    "503": (503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
    "400": (400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
    "403": (403, "PERMISSION_DENIED", "API key not valid. Please pass a valid API key."),
}


def _error(status: int, code: str, message: str, retry_delay: str | None = None) -> dict:
    error = {"code": status, "message": message, "status": code}
    if retry_delay is not None:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}]
    return {"error": error}


def decode_inline(data: str) -> bytes:
    """Inline bytes as the API accepts them: standard or URL-safe base64 (google-genai sends the URL-safe one)."""
    try:
        return base64.b64decode(data, validate=True)
    except ValueError:
        return base64.b64decode(data, altchars=b"-_", validate=True)


def inline_parts(body: dict) -> list[tuple[str, bytes]]:
    """(mime type, bytes) of every inline part, in order (the SDK writes mime_type or mimeType)."""
    found = []
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            inline = part.get("inlineData") or part.get("inline_data")
            if inline:
                found.append((inline.get("mimeType") or inline.get("mime_type"), decode_inline(inline["data"])))
    return found


def request_key(body: dict) -> str:
    """sha256 of the first inline audio part, or of the contents when there is none."""
    parts = inline_parts(body)
    return sha256(parts[0][1]) if parts else sha256(json.dumps(body.get("contents")).encode())


AUDIO_TOKENS_PER_S = 32  # Gemini API docs: each second of audio is 32 tokens


def request_text(body: dict) -> str:
    return "\n".join(part["text"] for content in body.get("contents", []) for part in content.get("parts", [])
                     if isinstance(part.get("text"), str))


def usage_of(text: str, clips: list[bytes]) -> dict:
    """usageMetadata as the API reports it, the prompt's tokens by modality: audio by its documented rate."""
    import soundfile as sf

    audio = sum(math.ceil(sf.info(io.BytesIO(c)).duration * AUDIO_TOKENS_PER_S) for c in clips)
    words = len(re.findall(r"\w+|[^\w\s]", text))
    details = [{"modality": "TEXT", "tokenCount": words}] + ([{"modality": "AUDIO", "tokenCount": audio}] if clips else [])
    return {"promptTokenCount": words + audio, "candidatesTokenCount": 1, "totalTokenCount": words + audio + 1,
            "promptTokensDetails": details}


def generate_response(model: str, text: str | None, finish: str = "STOP", candidates: bool = True,
                      usage: dict | None = None) -> dict:
    candidate = {"finishReason": finish, "index": 0}
    if text is not None:
        candidate["content"] = {"parts": [{"text": text}], "role": "model"}
    return {"candidates": [candidate] if candidates else [], "modelVersion": model,
            "usageMetadata": usage or {"promptTokenCount": 70, "candidatesTokenCount": 1, "totalTokenCount": 71}}


class GeminiHandler(Handler):
    """POST /{v1,v1beta}/models/{model}:generateContent and GET /{v1,v1beta}/models/{model}; options missing_models,
    and redirect_to, redirect_paths and redirect_after (Handler.redirected), mangle (servers.ear.Mangle: what the server
    does to the audio before its model hears it and counts its tokens), prefix (bytes sent before each JSON body,
    as a byte order mark)."""

    def send_json(self, status: int, data: object, headers: dict[str, str] | None = None) -> None:
        self.send_body(status, self.state.options.get("prefix", b"") + json.dumps(data).encode(), headers=headers)

    def _route(self) -> tuple[str | None, bool]:
        match = ROUTE.match(self.path.split("?")[0])
        return (match.group(2), bool(match.group(3))) if match else (None, False)

    def do_GET(self) -> None:
        self.read_body()  # a GET has none, but may say so in chunks
        if self.redirected():
            return None
        model, generate = self._route()
        if model is None or generate:
            return self.send_json(404, _error(404, "NOT_FOUND", f"no route {self.path}"))
        if model in self.state.options.get("missing_models", ()):
            return self.send_json(404, _error(404, "NOT_FOUND", f"models/{model} is not found for API version v1."))
        self.send_json(200, {"name": f"models/{model}", "version": "local-1", "displayName": model})

    def do_POST(self) -> None:
        model, generate = self._route()
        raw = self.read_body()
        if self.redirected(raw):
            return None
        if model is None or not generate:
            return self.send_json(404, _error(404, "NOT_FOUND", f"no route {self.path}"))
        body = json.loads(raw)
        self.serve_request(request_key(body), body, lambda key, fault: self._answer(model, key, fault, body))

    def _answer(self, model: str, key: str, fault: str | None, body: dict) -> None:
        if fault in ERRORS:
            status, code, message = ERRORS[fault]
            retry = self.state.retry_after + "s" if fault == "429" else None
            return self.send_json(status, _error(status, code, message, retry))
        if fault == "empty":
            return self.send_json(200, generate_response(model, None, candidates=False))
        if fault == "filter":  # the answer was stopped by the safety filter
            return self.send_json(200, generate_response(model, None, finish="SAFETY"))
        if fault == "refusal":  # the prompt itself was blocked
            return self.send_json(200, {"promptFeedback": {"blockReason": "SAFETY"}, "modelVersion": model})
        mangle = self.state.options.get("mangle", Mangle())  # what a faulty serving stack does to the audio
        clips = mangle.apply([data for mime, data in inline_parts(body) if (mime or "").startswith("audio")])
        text = canary_answer(request_text(body), clips, mangle.infer) or answer_for(key)  # probes heard honestly
        self.send_json(200, generate_response(model, text, usage=usage_of(request_text(body), clips)))


def serve(plan: FaultPlan | None = None, **kwargs) -> LocalServer:
    return LocalServer(GeminiHandler, plan, **kwargs)
