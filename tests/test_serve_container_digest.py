"""The image a server runs in, named in its /v1/models (docker_serve.sh sets ACOUSTICBENCH_CONTAINER_DIGEST): vLLM's
through the middleware our vLLM images load, ours directly; the harness copies it into the serving manifest."""
from __future__ import annotations

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from acousticbench.serve import hf_server  # noqa: E402
from acousticbench.serve.vllm_container_digest import DIGEST, add_container_digest  # noqa: E402

IMAGE = "sha256:" + "ab" * 32


def vllm_like_app() -> fastapi.FastAPI:
    """vLLM's /v1/models shape (an OpenAI model list), with the middleware as vLLM's --middleware adds a function."""
    app = fastapi.FastAPI()
    app.middleware("http")(add_container_digest)

    @app.get("/v1/models")
    def models():
        return {"object": "list", "data": [{"id": "acousticbench/tiny-qwen2-audio", "root": "/models/tiny"}]}

    @app.get("/health")
    def health():
        return {}

    return app


def test_vllms_model_list_names_the_image_it_runs_in(monkeypatch):
    client = TestClient(vllm_like_app())
    assert "container_digest" not in client.get("/v1/models").json()["data"][0]  # not started by docker_serve.sh
    monkeypatch.setenv(DIGEST, IMAGE)
    (entry,) = client.get("/v1/models").json()["data"]
    assert entry == {"id": "acousticbench/tiny-qwen2-audio", "root": "/models/tiny", "container_digest": IMAGE}
    assert client.get("/health").status_code == 200 and client.get("/health").json() == {}  # other routes untouched


def test_our_servers_model_list_names_the_image_it_runs_in(monkeypatch):
    assert "container_digest" not in hf_server.served_facts(object())
    monkeypatch.setenv(DIGEST, IMAGE)
    assert hf_server.served_facts(object())["container_digest"] == IMAGE
