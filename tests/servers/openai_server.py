"""An OpenAI-compatible server (chat completions with input_audio, transcriptions, /v1/models, /health), also the
vLLM stand-in, failing as a FaultPlan says; as a script it serves lean from its own process for benchmarks."""
from __future__ import annotations

import argparse
import base64
import email.parser
import email.policy
import io
import json
import math
import re
import time

try:
    from servers.batching import BatchingEngine, Shape
    from servers.ear import QUESTIONS, Mangle, canary_answer
    from servers.local import FaultPlan, Handler, LocalServer, answer_for, sha256
except ImportError:  # run as a script from tests/servers
    from batching import BatchingEngine, Shape
    from ear import QUESTIONS, Mangle, canary_answer
    from local import FaultPlan, Handler, LocalServer, answer_for, sha256

ERRORS = {
    "429": (429, "rate_limit_exceeded", "Rate limit reached for requests"),
    "500": (500, "server_error", "The server had an error while processing your request."),
    "503": (503, "server_error", "The engine is currently overloaded, please try again later."),
    "400": (400, "invalid_request_error", "Invalid audio: could not decode input_audio."),
    "401": (401, "invalid_api_key", "Incorrect API key provided."),
}


def _error(status: int, code: str, message: str) -> dict:
    return {"error": {"message": message, "type": code, "param": None, "code": code}}


def request_key(body: dict) -> tuple[str, list[bytes]]:
    """The sha256 of the first audio clip (or of the text when there is none), and every clip's bytes."""
    clips: list[bytes] = []
    texts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        for part in parts:
            if part.get("type") == "input_audio":
                clips.append(base64.b64decode(part["input_audio"]["data"], validate=True))
            elif part.get("type") == "text":
                texts.append(part["text"])
    return (sha256(clips[0]) if clips else sha256("\n".join(texts).encode())), clips


AUDIO_TOKENS_PER_S = 10  # OpenAI: input audio is 1 token per 100 ms (its Realtime cost guide); each clip rounded up


def wav_seconds(data: bytes) -> float:
    import soundfile as sf

    info = sf.info(io.BytesIO(data))
    return info.frames / info.samplerate


def word_pieces(text: str) -> int:
    """Text tokens counted as a BPE tokenizer mostly splits English: each word and each punctuation mark."""
    return len(re.findall(r"\w+|[^\w\s]", text))


def request_text(body: dict) -> str:
    """Every text part of a request, in order."""
    return "\n".join(part.get("text") or "" for message in body.get("messages", [])
                     for part in (message["content"] if isinstance(message.get("content"), list)
                                  else [{"type": "text", "text": message.get("content") or ""}])
                     if part.get("type") == "text")


def usage_of(body: dict, answer: str, clips: list[bytes] | None = None) -> dict:
    """The usage block as OpenAI reports it: text and audio prompt tokens apart, audio by its documented rate, of the
    clips the model got (`clips`, default: those of the request)."""
    if clips is None:
        clips = request_key(body)[1]
    audio = sum(math.ceil(wav_seconds(c) * AUDIO_TOKENS_PER_S) for c in clips)
    text = word_pieces(request_text(body))
    out = word_pieces(answer)
    return {"prompt_tokens": text + audio, "completion_tokens": out, "total_tokens": text + audio + out,
            "prompt_tokens_details": {"text_tokens": text, "audio_tokens": audio, "cached_tokens": 0},
            "completion_tokens_details": {"text_tokens": out, "audio_tokens": 0, "reasoning_tokens": 0}}


def completion(model: str, content: str | None, finish: str = "stop", refusal: str | None = None,
               choices: bool = True, usage: dict | None = None) -> dict:
    message = {"role": "assistant", "content": content, "refusal": refusal}
    return {"id": "chatcmpl-local", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}] if choices else [],
            "usage": usage or {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101}}


def heard(listener, key: str, body: dict, questions: dict) -> tuple:
    """(the key the listener draws by, the question as it can hear it): a deaf listener draws by the text alone; a
    question it cannot tell apart (clips it does not get, stereo heard in mono, audio it never heard) it guesses."""
    import soundfile as sf
    from servers.listener import Question

    if listener.deaf:
        texts = [part.get("text") or "" for message in body.get("messages", [])
                 for part in (message["content"] if isinstance(message.get("content"), list) else [])
                 if part.get("type") == "text"]
        return sha256("\n".join(texts).encode()), Question(None, None)
    clips = request_key(body)[1]
    known = questions.get(key)
    dropped = listener.clips is not None and len(clips) > listener.clips
    downmixed = listener.channels == 1 and any(sf.info(io.BytesIO(c)).channels > 1 for c in clips)
    if known is None or dropped or downmixed:
        return key, Question(None, None)
    return key, known[1]


class OpenAIHandler(Handler):
    """Routes of an OpenAI-compatible server; options: model_ids, missing_models, answer_text ({letter}: the answer,
    {key}: the request's first 8 hex digits), finish (the finish_reason of every answer, default stop),
    loading_until, echo_key (error messages repeat the API key), lean (answer 'A' without reading the request:
    benchmarks), reply_model (the model id its answers name, whatever was asked), probe_delay_s (each GET answers
    that late), listing (the /v1/models `data` it sends, as it is), reply_shape (a function of each answer's
    completion dict giving what is sent instead: a dict as JSON, bytes as they are), content_type (the Content-Type
    of each answer), redirect_to, redirect_paths and redirect_after (Handler.redirected), version (what GET
    /version answers, as vLLM), chat_template (POST /tokenize renders with it, as vLLM applies its template),
    answer_with (a function of the request body giving the answer's text), mangle (servers.ear.Mangle: what the
    server does to the audio before its model hears it and counts its tokens; the canary's probes are always answered
    by an honest ear from the audio kept), listeners (served model id ->
    servers.listener.Listener, who answers requests for that id) with questions (request key -> (id,
    listener.Question), from the test's pack), raw_bodies (path -> the bytes a GET or POST of it answers, as they
    are: a hostile server's)."""

    def _models(self) -> list[str]:
        return self.state.options.get("model_ids", ["local/served-model"])

    def do_GET(self) -> None:
        arrival = time.monotonic()
        self.read_body()  # a GET has none, but may say so in chunks
        try:
            self._get()
        finally:
            with self.state.lock:
                self.state.gets.append((self.path, arrival, time.monotonic()))

    def _get(self) -> None:
        if self.redirected():
            return None
        if self.path in self.state.options.get("raw_bodies", {}):
            return self.send_body(200, self.state.options["raw_bodies"][self.path], "application/json")
        if self.state.options.get("probe_delay_s"):  # a server far away: each of these answers one round trip late
            time.sleep(self.state.options["probe_delay_s"])
        if self.path == "/health":
            loading = time.time() < self.state.options.get("loading_until", 0)
            return self.send_body(503 if loading else 200, b"" if not loading else b"loading")
        if self.path == "/stats":
            state = self.state
            stats = {"served": state.served, "refused": state.refused, "max_inflight": state.max_inflight,
                     "first_arrival": state.first_arrival, "last_reply": state.last_reply}
            if self.headers.get("X-Reset"):  # a benchmark's next command starts the clock again
                state.first_arrival = state.last_reply = 0.0
            return self.send_json(200, stats)
        if self.path == "/version" and self.state.options.get("version"):  # vLLM's
            return self.send_json(200, {"version": self.state.options["version"]})
        if self.path == "/v1/models":
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "local"} for m in self._models()]
            data = self.state.options.get("listing", data)
            return self.send_json(200, {"object": "list", "data": data})
        if self.path.startswith("/v1/models/"):
            model = self.path.removeprefix("/v1/models/")
            if model in self.state.options.get("missing_models", ()):
                return self.send_json(404, _error(404, "model_not_found",
                                                  f"The model `{model}` does not exist or you do not have access to it."))
            return self.send_json(200, {"id": model, "object": "model", "created": 0, "owned_by": "local"})
        self.send_json(404, _error(404, "not_found", f"no route {self.path}"))

    def do_POST(self) -> None:
        raw = self.read_body()
        if self.redirected(raw):
            return None
        if self.path == "/v1/audio/transcriptions":
            return self._transcribe(raw)
        if self.path in self.state.options.get("raw_bodies", {}):
            return self.send_body(200, self.state.options["raw_bodies"][self.path], "application/json")
        if self.path == "/tokenize" and self.state.options.get("chat_template"):  # vLLM's, the template applied
            rendered = self.state.options["chat_template"] + json.dumps(json.loads(raw)["messages"])
            return self.send_json(200, {"tokens": [ord(c) for c in rendered], "count": len(rendered)})
        if self.path != "/v1/chat/completions":
            return self.send_json(404, _error(404, "not_found", f"no route {self.path}"))
        probe = any(q.encode() in raw for q in QUESTIONS.values())  # the canary's: heard even by a lean server
        if self.state.options.get("lean") and not probe:  # benchmarks: no parsing, so the server is not measured
            key = sha256(raw) if self.state.engine is not None else "0" * 64  # a batching engine's prefix cache
            return self.serve_request(key, {}, self._lean)
        body = json.loads(raw)
        if body.get("model") in self.state.options.get("missing_models", ()):
            return self.send_json(404, _error(404, "model_not_found", f"The model `{body['model']}` does not exist."))
        key, _clips = request_key(body)
        self.serve_request(key, body, lambda k, fault: self._answer(body, k, fault))

    def _lean(self, key: str, fault: str | None) -> None:
        if fault == "429":  # over capacity
            status, code, message = ERRORS["429"]
            return self.send_json(status, _error(status, code, message), {"Retry-After": self.state.retry_after})
        self.send_json(200, completion("lean", "A"))

    def _answer(self, body: dict, key: str, fault: str | None) -> None:
        model = self.state.options.get("reply_model") or body.get("model", "?")  # reply_model: a proxy's substitute
        if fault in ERRORS or fault in ("404",):
            status, code, message = ERRORS.get(fault, (404, "model_not_found", "The model does not exist."))
            if self.state.options.get("echo_key"):  # as careless proxies do: the harness must not pass it on
                message += f" (request key: {self.headers.get('Authorization', '').removeprefix('Bearer ')})"
            headers = {"Retry-After": self.state.retry_after} if fault == "429" else None
            return self.send_json(status, _error(status, code, message), headers)
        if fault == "empty":
            return self.send_json(200, completion(model, None, choices=False))
        if fault == "filter":
            return self.send_json(200, completion(model, None, finish="content_filter"))
        if fault == "refusal":
            return self.send_json(200, completion(model, None, refusal="I can't help with that."))
        listener = self.state.options.get("listeners", {}).get(body.get("model"))
        if listener is not None:  # a simulated listener of known truth (servers/listener.py)
            return self._listen(model, listener, key, body)
        mangle = self.state.options.get("mangle", Mangle())  # what a faulty serving stack does to the audio
        clips = mangle.apply(request_key(body)[1])
        text = self.state.options.get("answer_text", "{letter}").format(letter=answer_for(key), key=key[:8])
        if "answer_with" in self.state.options:  # a listener of ours that reads the request (AudioICL demos)
            text = self.state.options["answer_with"](body)
        text = canary_answer(request_text(body), clips, mangle.infer) or text  # the harness's probes, heard honestly
        finish = self.state.options.get("finish", "stop")
        answer = completion(model, text, finish=finish, usage=usage_of(body, text, clips))
        shaped = self.state.options.get("reply_shape", lambda c: c)(answer)
        content_type = self.state.options.get("content_type", "application/json")  # a proxy may label it otherwise
        self.send_body(200, shaped if isinstance(shaped, bytes) else json.dumps(shaped).encode(), content_type)

    def _listen(self, model: str, listener, key: str, body: dict) -> None:
        from servers.listener import CUT, REFUSAL

        mangle = Mangle(keep_clips=listener.clips, mono=listener.channels == 1)
        probe = None if listener.deaf else canary_answer(request_text(body), mangle.apply(request_key(body)[1]))
        if probe is not None:  # the harness's canary: heard as this listener's server passes the audio on
            return self.send_json(200, completion(model, probe))
        key, question = heard(listener, key, body, self.state.options["questions"])
        kind, label = listener.reply(key, question, body.get("seed"))
        if kind == "refusal":
            return self.send_json(200, completion(model, None, refusal=REFUSAL))
        text = CUT if kind == "cutoff" else label
        self.send_json(200, completion(model, text, finish="length" if kind == "cutoff" else "stop"))

    def _transcribe(self, raw: bytes) -> None:
        """multipart/form-data with `file` and `model`: a transcript naming the clip's hash."""
        head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
        fields = {part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
                  for part in message.iter_parts()}
        key = sha256(fields["file"])
        self.serve_request(key, {"model": fields["model"].decode(), "file_sha256": key},
                           lambda k, fault: self.send_json(200, {"text": f"clip {k[:8]} says hello"}))


def serve(plan: FaultPlan | None = None, **kwargs) -> LocalServer:
    return LocalServer(OpenAIHandler, plan, **kwargs)


def main() -> None:
    """Serve lean (see OpenAIHandler) until killed; write the port to --port-file once listening; with --capacity N,
    the N+1st request at once gets 429 with Retry-After; GET /stats gives the counts (benchmarks read them)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--port-file", help="where to write the port once listening")
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (default: any free one)")
    parser.add_argument("--model-id", default="local/served-model", help="the model id /v1/models lists")
    parser.add_argument("--capacity", type=int)
    parser.add_argument("--retry-after", default="1")
    parser.add_argument("--probe-delay", type=float, default=0.0, help="seconds before each GET answers: a server "
                        "that far away, for what probing it costs before the first request")
    parser.add_argument("--batching", help="answer in a batching engine's steps instead of after --delay: "
                        "a,b,max_batch[,steps[,prefill[,cached_prefill]]] (servers/batching.py's Shape)")
    args = parser.parse_args()
    engine = BatchingEngine(Shape.parse(args.batching)) if args.batching else None
    server = serve(delay_s=args.delay, lean=True, capacity=args.capacity, retry_after=args.retry_after,
                   probe_delay_s=args.probe_delay, port=args.port, model_ids=[args.model_id], engine=engine)
    server.state.keep_bodies = False
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as fh:
            fh.write(str(server.port))
        import os

        os.replace(args.port_file + ".tmp", args.port_file)
    import signal

    signal.signal(signal.SIGTERM, lambda *_: server.stop())  # stop as a server does: its connections dropped
    server.start()._thread.join()


if __name__ == "__main__":
    main()
