"""The listening page's server (the standard library's http.server, on 127.0.0.1 only): one self-contained HTML
page, its small JSON API, and the clips of the trial on the page now; any request whose Host, Origin or fetch site is
not this page's own address is refused with 403."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from acousticbench.core.reporter import warn
from acousticbench.core.errors import UserError
from acousticbench.models.human.listening import Listening, Refused

PAGE = Path(__file__).with_name("page.html")
MAX_BODY = 64 * 1024
# nothing but this page's own address may be fetched; the script and style are the page's inline ones
POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
          "media-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
POSTS = {"/api/setup": Listening.setup, "/api/calibration": Listening.calibrate, "/api/answer": Listening.answer}


class PageHandler(BaseHTTPRequestHandler):
    listening: Listening
    host: str  # "127.0.0.1:PORT", the only Host header answered
    page: bytes

    def log_message(self, format: str, *args) -> None:  # the run's terminal is for the run, not for access logs
        return None

    def _foreign(self) -> bool:
        """A request from anywhere but this page: another Host (DNS rebinding), another Origin, a cross-site fetch."""
        origin, site = self.headers.get("Origin"), self.headers.get("Sec-Fetch-Site")
        return (self.headers.get("Host") != self.host or (origin is not None and origin != f"http://{self.host}")
                or site not in (None, "same-origin", "none"))

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in {"Content-Type": content_type, "Content-Length": str(len(body)), "Cache-Control": "no-store",
                            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
                            "Cross-Origin-Resource-Policy": "same-origin", **(extra or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: dict) -> None:
        self._send(status, json.dumps(data, allow_nan=False).encode(), "application/json")

    def do_GET(self) -> None:
        if self._foreign():
            return self._json(403, {"error": "this page answers only its own address"})
        path = self.path.split("?", 1)[0]
        if path == "/":
            return self._send(200, self.page, "text/html; charset=utf-8", {"Content-Security-Policy": POLICY})
        if path == "/favicon.ico":  # browsers ask for one; there is none
            return self._send(204, b"", "image/x-icon")
        if path == "/api/state":
            return self._json(200, self.listening.state())
        parts = path.split("/")
        if len(parts) == 4 and parts[1] == "clip" and parts[3].isdigit():
            return self._clip(parts[2], int(parts[3]))
        return self._json(404, {"error": "not found"})

    def _clip(self, item_id: str, n: int) -> None:
        from acousticbench.core.clip_pins import ClipChanged
        from acousticbench.models.wire import wav_bytes

        try:
            clip = self.listening.clip(item_id, n)
            body = clip if isinstance(clip, bytes) else wav_bytes(clip)
        except Refused as err:
            return self._json(err.status, {"error": str(err)})
        except UserError as err:  # a clip gone from the pack since the run's check
            return self._json(404, {"error": str(err)})
        except ClipChanged as err:  # replaced since the check: never played as the pack's
            return self._json(409, {"error": str(err)})
        return self._send(200, body, "audio/wav")

    def do_POST(self) -> None:
        if self._foreign():
            return self._json(403, {"error": "this page answers only its own address"})
        action = POSTS.get(self.path)
        if action is None:
            return self._json(404, {"error": "not found"})
        try:
            data = self._body()
            action(self.listening, data)
        except Refused as err:
            return self._json(err.status, {"error": str(err)})
        except (TypeError, ValueError, KeyError, AttributeError) as err:  # a body of the wrong shape for its action
            return self._json(400, {"error": f"the body does not fit {self.path} ({type(err).__name__})"})
        return self._json(200, self.listening.state())

    def _body(self) -> dict:
        """The post's JSON object; Refused (a 4xx naming why) for anything else. An unread body closes the
        connection, so what is left of it is never taken for the next request."""
        text = self.headers.get("Content-Length") or ""
        length = int(text) if text.strip().isdigit() else None
        if length is None or length > MAX_BODY or length == 0:
            self.close_connection = True
            if length is not None and length > MAX_BODY:
                raise Refused("the body is over 64 KiB", 413)
            raise Refused("send a JSON body of up to 64 KiB, with its Content-Length")
        raw = self.rfile.read(length)
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            raise Refused("send the body as application/json", 415)
        try:
            data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        except UnicodeDecodeError:
            raise Refused("the body is not UTF-8") from None
        except RecursionError:
            raise Refused("the body is nested deeper than any answer is") from None
        except ValueError as err:  # NaN and Infinity too: no time or count is either
            raise Refused(f"the body is not JSON ({err})") from None
        if not isinstance(data, dict):
            raise Refused("send a JSON object")
        return data


def _no_constant(word: str):
    raise ValueError(f"{word} is not JSON")


class QuietServer(ThreadingHTTPServer):
    """The page's server: a client gone mid-answer (a closed tab) or any other failure of one request is one line at
    most, never a traceback on the run's terminal."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        import sys

        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError):
            warn(f"note: the listening page failed one request ({type(error).__name__}: {error})")


class PageServer:
    """The page served from a daemon thread on 127.0.0.1:`port` (0: a free port), until `stop`."""

    def __init__(self, listening: Listening, port: int):
        try:
            self.server = QuietServer(("127.0.0.1", port), _handler(listening, port))
        except OSError as err:
            raise UserError(f"the Human model's page cannot listen on 127.0.0.1:{port} ({err.strerror}): set "
                            "ACOUSTICBENCH_HUMAN_PORT to a free port, or unset it for any free one.") from None
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.server.RequestHandlerClass.host = f"127.0.0.1:{self.port}"
        self.url = f"http://127.0.0.1:{self.port}/"
        self.thread = threading.Thread(target=self.server.serve_forever, name="human-page", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(listening: Listening, port: int) -> type[PageHandler]:
    """A handler class bound to this session (http.server makes one handler object per request)."""
    return type("BoundPageHandler", (PageHandler,), {"listening": listening, "host": f"127.0.0.1:{port}",
                                                     "page": PAGE.read_bytes()})
