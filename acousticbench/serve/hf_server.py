"""Our OpenAI-compatible server for the models vLLM does not serve: /v1/chat/completions, /v1/models, /health."""
# no `from __future__ import annotations`: FastAPI must see the real Request class in the route signatures

import argparse
import asyncio
import errno
import hashlib
import json
import logging
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError
from acousticbench.serve.adapters import Adapter, Generation
from acousticbench.serve.chat_request import BadRequest, parse_chat
from acousticbench.serve.vllm_container_digest import DIGEST

INSTALL = 'pip install torch==2.13.0 -e ".[hf-server]"'
MAX_AUDIO_S = 600.0  # 10 minutes per clip; the longest benchmark clip is far shorter
log = logging.getLogger("acousticbench.serve")


def error_body(message: str, param: str | None = None, kind: str = "invalid_request_error",
               code: str | None = None) -> dict[str, Any]:
    """OpenAI's error shape, which the openai SDK reads into its error's message."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def served_facts(adapter: Any) -> dict[str, Any]:
    """What /v1/models says of how the model is served, where the adapter has it: the sha256 of its chat template,
    its processor's sampling rate, the checkpoint's revision."""
    processor = getattr(adapter, "processor", None)
    template = getattr(processor, "chat_template", None) or getattr(getattr(adapter, "tokenizer", None),
                                                                    "chat_template", None)
    facts = {"chat_template_sha256": hashlib.sha256(template.encode()).hexdigest() if isinstance(template, str) else None,
             "sampling_rate": getattr(getattr(processor, "feature_extractor", None), "sampling_rate", None),
             "revision": getattr(adapter, "revision", None),
             "container_digest": os.environ.get(DIGEST)}  # the image docker_serve.sh started, if it did
    return {k: v for k, v in facts.items() if v is not None}


def unknown_model(body: Any, served: str) -> str | None:
    """Why a request is not for the served model (a 404), or None; no "model" at all means the served one."""
    asked = body.get("model") if isinstance(body, dict) else None
    if asked in (None, "", served):
        return None
    return f"the model {asked!r} is not served here; this server serves {served!r} (see /v1/models)"


def completion_body(model_id: str, generation: Generation) -> dict[str, Any]:
    usage = {"prompt_tokens": generation.prompt_tokens, "completion_tokens": generation.completion_tokens,
             "total_tokens": generation.prompt_tokens + generation.completion_tokens}
    digest = hashlib.sha256(f"{time.time_ns()}{generation.text}".encode()).hexdigest()[:24]
    return {
        "id": f"chatcmpl-{digest}", "object": "chat.completion", "created": int(time.time()), "model": model_id,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": generation.text, "refusal": None},
                     "logprobs": None if generation.logprobs is None else {"content": generation.logprobs},
                     "finish_reason": generation.finish_reason}],
        "usage": usage, "system_fingerprint": None,
    }


def create_app(adapter: Adapter, max_audio_s: float = MAX_AUDIO_S):
    """The FastAPI app around one loaded model; generate runs in a thread, one request at a time."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    app = FastAPI(title="AcousticBench transformers server", docs_url=None, redoc_url=None)
    gpu = asyncio.Lock()  # one model on one device: a second request waits its turn here, in arrival order

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    facts = served_facts(adapter)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        # "decoding": the arguments the adapter passes its model, in the vendor's names, so config.json records them;
        # the facts: how it is served (template hash, processor rate, revision), for config.json's manifest
        return {"object": "list", "data": [{"id": adapter.model_id, "object": "model", "created": 0,
                                            "owned_by": "acousticbench", "decoding": adapter.decoding, **facts}]}

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request):
        try:
            body = json.loads(await request.body())
            if (wrong := unknown_model(body, adapter.model_id)) is not None:
                return JSONResponse(error_body(wrong, "model", code="model_not_found"), status_code=404)
            chat = parse_chat(body, max_audio_s)
            if body.get("stream"):
                raise BadRequest("stream is not supported; send stream: false", "stream")
            if chat.top_logprobs is not None and not getattr(adapter, "logprobs", False):
                raise BadRequest(f"logprobs are not available for {adapter.model_id} here", "logprobs")
        except json.JSONDecodeError as err:
            return JSONResponse(error_body(f"the body is not JSON ({err.msg})"), status_code=400)
        except UnicodeDecodeError:  # json.loads of bytes that are no UTF-8: the client's fault, not a 500
            return JSONResponse(error_body("the body is not UTF-8 JSON"), status_code=400)
        except BadRequest as err:
            return JSONResponse(error_body(str(err), err.param), status_code=400)
        async with gpu:
            try:
                generation = await asyncio.to_thread(adapter.generate, chat)
            except Exception as err:  # noqa: BLE001 - one failed request must not take the server down
                log.exception("generate failed")
                return JSONResponse(error_body(f"the model failed: {type(err).__name__}: {err}", kind="server_error"),
                                    status_code=500)
        return completion_body(adapter.model_id, generation)

    return app


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m acousticbench.serve.hf_server", description=__doc__)
    p.add_argument("--model", required=True, help="tiny_qwen2_audio, kimi_audio_7b_instruct or minicpm_o_4_5")
    p.add_argument("--lora", type=Path, help="a PEFT LoRA adapter folder, merged into the model once and cached")
    p.add_argument("--host", default="127.0.0.1", help="0.0.0.0 inside a container; 127.0.0.1 otherwise")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--max-audio-s", type=float, default=MAX_AUDIO_S, help="longest clip accepted, in seconds")
    p.add_argument("--exit-with-parent", action="store_true", help="exit when the process that started it ends")
    return p


def exit_with_parent() -> None:
    """Exit when our parent (a run.py that started us) is gone, even if it was killed before it could stop us."""
    import os
    import threading

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()


def _require_packages() -> None:
    import importlib.util

    missing = [m for m in ("torch", "transformers", "fastapi", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        raise UserError(f"the transformers server needs {', '.join(missing)}: {INSTALL}")


def bind(host: str, port: int) -> socket.socket:
    """The server's socket, bound but not yet listening: a taken port fails now, and /health is refused until ready."""
    if not 1 <= port <= 65535:
        raise UserError(f"--port {port} is not a TCP port (1-65535).")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as err:
        raise UserError(f"--host {host}: cannot listen there ({err.strerror}).") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a port in TIME_WAIT is free
    try:
        sock.bind(address)
    except OSError as err:
        sock.close()
        why = ("is in use: stop what listens there, or pass another --port" if err.errno == errno.EADDRINUSE
               else f"cannot be listened on ({err.strerror})")
        raise UserError(f"port {port} on {host} {why}.") from None
    return sock


def serve(app: Any, sock: socket.socket, model_id: str, loaded_s: float) -> None:
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if not self.should_exit:  # now listening: the first moment it is true that we serve
                host, port = sock.getsockname()[:2]
                log.info("serving %s on http://%s:%d (loaded in %.1f s)", model_id, host, port, loaded_s)

    Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    if args.exit_with_parent:
        exit_with_parent()
    try:
        sock = bind(args.host, args.port)  # seconds, not the minutes of loading, to learn the port is taken
        _require_packages()
        from acousticbench.serve.adapters import load_adapter

        log.info("loading %s for %s:%d (/health answers once it is loaded)", args.model, args.host, args.port)
        started = time.monotonic()
        adapter = load_adapter(args.model, args.lora)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    serve(create_app(adapter, args.max_audio_s), sock, adapter.model_id, time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
