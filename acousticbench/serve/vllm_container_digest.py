"""A middleware vLLM loads in our images (--middleware) so its /v1/models names the image it runs in, as our own server
does: each model entry gets `container_digest` from $ACOUSTICBENCH_CONTAINER_DIGEST, which docker_serve.sh sets to the
image's id, and the harness copies it into the run's serving manifest. Standalone: the vLLM images copy only this."""
import json
import os

DIGEST = "ACOUSTICBENCH_CONTAINER_DIGEST"
MIDDLEWARE = "vllm_container_digest.add_container_digest"  # the import path the images put on PYTHONPATH


async def add_container_digest(request, call_next):
    response = await call_next(request)
    digest = os.environ.get(DIGEST)
    if request.url.path != "/v1/models" or not digest or response.status_code != 200:
        return response
    from starlette.responses import JSONResponse

    listing = json.loads(b"".join([chunk async for chunk in response.body_iterator]))
    for entry in listing.get("data") or []:
        entry["container_digest"] = digest
    return JSONResponse(listing)
