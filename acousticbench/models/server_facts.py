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
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
