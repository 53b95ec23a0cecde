"""What a served model's server says about itself, read strictly: the model ids of its /v1/models (each a name, or the
server is refused); where its answers really come from after a redirect is models/redirects.py."""
from __future__ import annotations

import json
from typing import Any

from acousticbench.core.errors import UserError


def served_models(listing: Any, where: str) -> dict[str, Any]:
    """model id -> the decoding the server says it applies (our server) or None, in the server's order. A list
    that is not one, or a model without a usable id (null, empty, not a string), is one line naming it: a request
    sent to `model: null` would be answered by whatever the server picks."""
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        raise UserError(f"{where}/v1/models is not a model list (no `data` list in {_excerpt(listing)}): check the "
                        "server's logs, or that --endpoint names an OpenAI-compatible server.")
    models: dict[str, Any] = {}
    for n, entry in enumerate(data, 1):
        model_id = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(model_id, str) or not model_id.strip():
            raise UserError(f"{where}/v1/models lists a model without an id (entry {n} of {len(data)}: "
                            f"{_excerpt(entry)}): the server is misconfigured; check its logs and its served model name.")
        models[model_id] = entry.get("decoding")
    return models


def _excerpt(value: Any) -> str:
    text = json.dumps(value, default=str, allow_nan=True)  # a line of a message, not a file: NaN as the server sent it
    return text if len(text) <= 80 else text[:77] + "..."


# a fixed conversation the server's chat template renders: the hash of its tokens changes when the template does
TEMPLATE_PROBE = [{"role": "system", "content": "You are a helpful assistant."},
                  {"role": "user", "content": "Which clip is louder? Answer A or B."}]
LISTED = {"root": "root", "max_model_len": "max_model_len", "revision": "model_revision",
          "chat_template_sha256": "chat_template_sha256", "sampling_rate": "processor_sampling_rate",
          "container_digest": "container_digest"}  # /v1/models fields (vLLM's, ours) -> the manifest's names


def listed_facts(listing: Any, model_id: str) -> dict[str, Any]:
    """What the server's /v1/models entry for the model says of how it is served (revision, template hash, ...)."""
    for entry in (listing.get("data") if isinstance(listing, dict) else None) or []:
        if isinstance(entry, dict) and entry.get("id") == model_id:
            return {name: entry[key] for key, name in LISTED.items() if entry.get(key) not in (None, "")}
    return {}


async def template_facts(tokenize, model_id: str) -> dict[str, str]:
    """vLLM: the sha256 of the token ids its /tokenize gives for TEMPLATE_PROBE with the chat template applied (call
    `tokenize` with the request body); {} from a server without the route or that does not answer in time."""
    import asyncio
    import hashlib

    from acousticbench.core.errors import BackendError

    probe = {"model": model_id, "messages": TEMPLATE_PROBE, "add_generation_prompt": True}
    body = json.dumps(probe, allow_nan=False).encode()
    try:
        tokenized = await asyncio.wait_for(tokenize(body), 10.0)
    except (BackendError, TimeoutError):
        return {}
    tokens = tokenized.get("tokens") if isinstance(tokenized, dict) else None
    if not isinstance(tokens, list) or not tokens:
        return {}
    return {"chat_template_render_sha256": hashlib.sha256(json.dumps(tokens, allow_nan=False).encode()).hexdigest()}
