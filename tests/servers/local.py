"""A real HTTP server on 127.0.0.1 (ephemeral port) with a scripted, deterministic fault plan and a log of requests."""
from __future__ import annotations

import hashlib
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# every way a provider fails that the harness must handle; the first six are worth retrying
RETRYABLE_FAULTS = ("429", "500", "503", "slow", "reset", "malformed")
TERMINAL_FAULTS = ("empty", "filter", "refusal", "400")
ALL_FAULTS = RETRYABLE_FAULTS + TERMINAL_FAULTS


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_probe(body: dict) -> bool:
    """A request of the harness's start-of-run canary (its tone probes): logged apart from the run's questions."""
    return is_probe_bytes(json.dumps(body).encode())


def is_probe_bytes(raw: bytes) -> bool:
    from acousticbench.run.canary import QUESTIONS

    return any(question.encode() in raw for question in QUESTIONS.values())


def answer_for(key: str) -> str:
    """The server's deterministic answer to a request whose first clip hashes to `key`."""
    return "A" if int(key[:8], 16) % 2 == 0 else "B"


@dataclass
class FaultPlan:
    """Which request fails how: from (request key, attempt number), so a run can be predicted exactly."""

    rate: float = 0.0  # share of (key, attempt) pairs that fail, drawn by hash
    kinds: tuple[str, ...] = ALL_FAULTS
    by_key: dict[str, list[str | None]] = field(default_factory=dict)  # key -> fault per attempt, for targeted tests
    always: str | None = None  # every request fails this way

    def fault(self, key: str, attempt: int) -> str | None:
        if self.always:
            return self.always
        if key in self.by_key:
            faults = self.by_key[key]
            return faults[attempt - 1] if attempt <= len(faults) else None
        digest = hashlib.sha256(f"{key}:{attempt}".encode()).digest()
        if digest[0] / 256 < self.rate:
            return self.kinds[digest[1] % len(self.kinds)]
        return None


@dataclass
class Received:
    """One request as the server saw it (bodies kept for wire-format assertions)."""

    path: str
    key: str
    attempt: int
    fault: str | None
    body: dict
    headers: dict  # names lower-cased


class ServerState:
    def __init__(self, plan: FaultPlan, delay_s: float, slow_s: float, retry_after: str):
        self.plan, self.delay_s, self.slow_s, self.retry_after = plan, delay_s, slow_s, retry_after
        self.lock = threading.Lock()
        self.attempts: dict[str, int] = {}
        self.arrivals: dict[str, list[float]] = {}  # monotonic arrival times per key: backoff is observable
        self.received: list[Received] = []  # the run's own requests
        self.probes: list[Received] = []  # the canary's, before them (is_probe): not counted as served
        self.gets: list[tuple[str, float, float]] = []  # path, arrival and answer (monotonic) of each GET
        self.inflight = self.max_inflight = 0
        self.capacity: int | None = None  # more at once than this are refused at once with 429 and Retry-After
        self.serial: threading.Lock | None = None  # one request at a time, the rest queue: latency grows with load
        self.engine = None  # a servers.batching.BatchingEngine: requests are answered in its batches instead
        self.refused = self.served = 0
        self.first_arrival = self.last_reply = 0.0  # wall-clock times: benchmarks split a command's start and end
        self.keep_bodies = True
        self.answered_here = 0  # requests a redirecting server answered itself before it began to redirect

    def next_attempt(self, key: str) -> int:
        with self.lock:
            self.attempts[key] = self.attempts.get(key, 0) + 1
            self.arrivals.setdefault(key, []).append(time.monotonic())
            return self.attempts[key]

    def log(self, item: Received) -> bool:
        """Keep the request; whether it is a canary probe."""
        probe = is_probe(item.body)
        with self.lock:
            if not self.keep_bodies:
                item.body = {}
            (self.probes if probe else self.received).append(item)
        return probe


class Handler(BaseHTTPRequestHandler):
    """Plumbing shared by the provider servers: JSON in and out, delays, resets, in-flight counting."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no delayed-ACK stall between them
    server: "_Server"

    def log_message(self, *args) -> None:  # quiet: the tests read the request log instead
        return None

    @property
    def state(self) -> ServerState:
        return self.server.state

    def redirected(self, raw: bytes = b"") -> bool:
        """Options redirect_to (a URL): a request whose path holds one of redirect_paths (default: every request)
        gets a 307 to the same path there, once redirect_after (default 0) of them were answered here: a server
        that starts redirecting mid-run. The canary's probes (`raw`, the body) come first and are not counted."""
        options, state = self.state.options, self.state
        target, paths = options.get("redirect_to"), options.get("redirect_paths")
        if not target or (paths is not None and not any(p in self.path for p in paths)):
            return False
        if options.get("redirect_after") and is_probe_bytes(raw):
            return False
        with state.lock:
            state.answered_here += 1
            if state.answered_here <= options.get("redirect_after", 0):
                return False
        self.send_body(307, b"", headers={"Location": target + self.path})
        return True

    def read_body(self) -> bytes:
        """The body by its Content-Length, or its chunks (the openai SDK's aiohttp transport sends a redirected GET
        an empty chunked body)."""
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b""
        while size := int(self.rfile.readline().split(b";")[0], 16):
            body += self.rfile.read(size)
            self.rfile.readline()
        self.rfile.readline()  # the blank line after the last chunk
        return body

    def send_body(self, status: int, body: bytes, content_type: str = "application/json",
                  headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status: int, data: object, headers: dict[str, str] | None = None) -> None:
        self.send_body(status, json.dumps(data).encode(), headers=headers)

    def reset(self) -> None:
        """Close the socket with an RST and no response, as a crashing proxy would."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def stall(self) -> None:
        """Headers that promise a body, then nothing for slow_s seconds, as a wedged proxy or server does."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "4096")
        self.end_headers()
        self.wfile.flush()
        time.sleep(self.state.slow_s)
        self.close_connection = True

    def serve_request(self, key: str, body: dict, answer) -> None:
        """Apply the plan for this (key, attempt), then answer with `answer(key, fault)` (fault None or terminal);
        over the server's capacity, a request is refused at once with a 429, as a rate-limited API or a full engine."""
        state = self.state
        with state.lock:
            refused = state.capacity is not None and state.inflight >= state.capacity
            state.refused += refused
            state.first_arrival = state.first_arrival or time.time()
        if refused:
            return answer(key, "429")
        attempt = state.next_attempt(key)
        fault = state.plan.fault(key, attempt)
        probe = state.log(Received(self.path, key, attempt, fault, body, {k.lower(): v for k, v in self.headers.items()}))
        with state.lock:
            state.inflight += 1
            state.served += not probe
            number = state.served if not probe else 0
            state.max_inflight = max(state.max_inflight, state.inflight)
        try:
            hold = state.options.get("hold_after")  # requests past the first N wait for `release`: a replica stuck
            if hold is not None and number > hold:  # with questions on the wire, until it is killed
                state.options["release"].wait()
            if state.engine is not None:
                state.engine.serve(key)
            elif state.serial is not None:
                with state.serial:
                    time.sleep(state.delay_s)
            paced = state.serial is not None or state.engine is not None  # its delay was spent above
            time.sleep((0.0 if paced else state.delay_s) + (state.slow_s if fault == "slow" else 0.0))
        finally:  # done before its answer goes out: a client that has the answer may send its next one at once,
            with state.lock:  # on another connection, which another thread serves (counted after, it overlapped)
                state.inflight -= 1
                state.last_reply = time.time()
        if fault == "reset":
            return self.reset()
        if fault == "stall":
            return self.stall()
        if fault == "malformed":
            return self.send_body(200, b'{"id": "broken", "choices": [ {"mess')
        if fault == "garbled":  # not HTTP at all: a status line no client can read, as a broken proxy sends
            self.wfile.write(b"HTTP/1.1 2OO OK\r\n\r\n")
            self.close_connection = True
            return None
        answer(key, None if fault == "slow" else fault)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # 64+ clients connect at once; the default backlog of 5 drops SYNs
    allow_reuse_address = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.connections: set[socket.socket] = set()

    def process_request(self, request, client_address) -> None:
        self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request) -> None:
        self.connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """What a dying server does to its keep-alive clients: close every open connection."""
        for conn in list(self.connections):
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request, client_address) -> None:
        """A reset socket is expected; anything else is a bug in the test server, shown on stderr."""
        import sys
        import traceback

        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            traceback.print_exc()


class LocalServer:
    """Start a handler class on 127.0.0.1:0 in a thread; `with LocalServer(...) as s:` gives `s.url`."""

    def __init__(self, handler: type[Handler], plan: FaultPlan | None = None, *, delay_s: float = 0.0,
                 slow_s: float = 2.0, retry_after: str = "0", port: int = 0, capacity: int | None = None,
                 serial: bool = False, engine=None, **options):
        self.state = ServerState(plan or FaultPlan(), delay_s, slow_s, retry_after)
        self.state.capacity = capacity
        self.state.serial = threading.Lock() if serial else None
        self.state.engine = engine
        self.state.options = options
        self._httpd = _Server(("127.0.0.1", port), handler)
        self._httpd.state = self.state
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> "LocalServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd.drop_connections()

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def probes(self) -> list[Received]:
        """The canary's probe requests, which `received` leaves out."""
        return self.state.probes

    @property
    def received(self) -> list[Received]:
        return list(self.state.received)
