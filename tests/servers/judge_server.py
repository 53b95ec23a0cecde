"""A scriptable OpenAI-compatible judge server on 127.0.0.1: structured-output verdicts, rate limits, errors."""
from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Canned:
    """One scripted HTTP reply."""

    status: int = 200
    body: dict[str, Any] | str = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


def completion(model: str, content: str | None, refusal: str | None = None, finish: str = "stop") -> dict[str, Any]:
    """A chat.completion body the way the real API sends a json_schema reply: the JSON as message.content."""
    return {"id": "chatcmpl-judge", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": finish, "logprobs": None,
                         "message": {"role": "assistant", "content": content, "refusal": refusal}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 12, "total_tokens": 62}}


def verdict(label: str, refused: bool = False, reason: str = "scripted") -> Canned:
    return Canned(body={"content": json.dumps({"label": label, "refused": refused, "reason": reason})})


def malformed() -> Canned:
    return Canned(body={"content": '{"label": "A", "refused": '})  # cut short: not JSON


def judge_refusal() -> Canned:
    return Canned(body={"content": None, "refusal": "I'm sorry, I can't help with that."})


def error(status: int, retry_after: str | None = None) -> Canned:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    kind = "rate_limit_exceeded" if status == 429 else "server_error"
    return Canned(status, {"error": {"message": f"scripted {status}", "type": kind, "code": kind}}, headers)


class JudgeServer:
    """Answers POST /v1/chat/completions from `script` (first in, first out), then from `default(request)`.
    Every request body is kept in `requests`. With `redirect_to` (another server's root URL) set, every request after
    the first `redirect_after` it answered itself gets a 307 to the same path there."""

    def __init__(self, default: Callable[[dict[str, Any]], Canned] | None = None, *, redirect_to: str | None = None,
                 redirect_after: int = 0):
        self.redirect_to, self.redirect_after = redirect_to, redirect_after
        self.script: deque[Canned] = deque()
        self.requests: list[dict[str, Any]] = []
        self.default = default or (lambda request: verdict("none"))
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def url(self) -> str:
        return self.root + "/v1"

    def _moves(self) -> bool:
        """Whether this request is redirected (see redirect_to); counted under the lock, so exactly the first
        redirect_after requests are answered here whatever their concurrency."""
        with self._lock:
            self.redirect_after -= 1
            return self.redirect_to is not None and self.redirect_after < 0

    def __enter__(self) -> "JudgeServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, request: dict[str, Any]) -> Canned:
        with self._lock:
            self.requests.append(request)
            return self.script.popleft() if self.script else self.default(request)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                if server._moves():
                    self.send_response(307)
                    self.send_header("location", server.redirect_to + self.path)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                canned = server._next(request)
                body = canned.body
                if canned.status == 200 and isinstance(body, dict) and "content" in body:
                    body = completion(request.get("model", "?"), body["content"], body.get("refusal"))
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(canned.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in canned.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler
