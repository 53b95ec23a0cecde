"""Our OpenAI-compatible server for the models vLLM does not serve: /v1/chat/completions, /v1/models, /health."""
# no `from __future__ import annotations`: FastAPI must see the real Request class in the route signatures

import argparse
import asyncio
import hashlib
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from acousticbench.errors import UserError
from acousticbench.serve.adapters import Adapter, Generation
from acousticbench.serve.chat_request import BadRequest, parse_chat

INSTALL = 'pip install torch==2.13.0 -e ".[hf-server]"'
MAX_AUDIO_S = 600.0  # 10 minutes per clip; the longest benchmark clip is far shorter
log = logging.getLogger("acousticbench.serve")


def error_body(message: str, param: str | None = None, kind: str = "invalid_request_error") -> dict[str, Any]:
    """OpenAI's error shape, which the openai SDK reads into its error's message."""
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


def completion_body(model_id: str, generation: Generation) -> dict[str, Any]:
    usage = {"prompt_tokens": generation.prompt_tokens, "completion_tokens": generation.completion_tokens,
             "total_tokens": generation.prompt_tokens + generation.completion_tokens}
    digest = hashlib.sha256(f"{time.time_ns()}{generation.text}".encode()).hexdigest()[:24]
    return {
        "id": f"chatcmpl-{digest}", "object": "chat.completion", "created": int(time.time()), "model": model_id,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": generation.text, "refusal": None},
                     "logprobs": None, "finish_reason": generation.finish_reason}],
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

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        # "decoding": the arguments the adapter passes its model, in the vendor's names, so config.json records them
        return {"object": "list", "data": [{"id": adapter.model_id, "object": "model", "created": 0,
                                            "owned_by": "acousticbench", "decoding": adapter.decoding}]}

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request):
        try:
            body = json.loads(await request.body())
            chat = parse_chat(body, max_audio_s)
            if body.get("stream"):
                raise BadRequest("stream is not supported; send stream: false", "stream")
        except json.JSONDecodeError as err:
            return JSONResponse(error_body(f"the body is not JSON ({err.msg})"), status_code=400)
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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    if args.exit_with_parent:
        exit_with_parent()
    try:
        _require_packages()
        from acousticbench.serve.adapters import load_adapter

        started = time.monotonic()
        adapter = load_adapter(args.model, args.lora)  # before listening: /health answers only once it can serve
        log.info("loaded %s in %.1f s; serving on %s:%d", adapter.model_id, time.monotonic() - started,
                 args.host, args.port)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    import uvicorn

    uvicorn.run(create_app(adapter, args.max_audio_s), host=args.host, port=args.port, log_level="warning",
                access_log=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
