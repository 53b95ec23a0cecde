"""What the utils.py of an exported lmms-eval task calls: the pack's questions file checked against its manifest, each
question's clips checked against their pinned sha256 and handed over in the forms lmms-eval's backends read, our
prompt text, and our strict A/B rules on the reply (a refusal or an unreadable reply is never scored as an answer)."""
from __future__ import annotations

import base64
import hashlib
import io
from pathlib import Path
from typing import Any

from acousticbench.core.errors import ArchiveError


def process_docs(archive: str, dataset):
    """The scored questions (diagnostic items have no right answer to credit), after checking that each task's
    questions file is the one MANIFEST.json pins."""
    from acousticbench.benchmarks.acoustic.pack import listed_sha256, load_manifest, questions_relpath

    manifest = load_manifest(Path(archive))
    for task in sorted(set(dataset["task"])):
        path = Path(archive) / questions_relpath(task)
        if hashlib.sha256(path.read_bytes()).hexdigest() != listed_sha256(manifest, task):
            raise ArchiveError(f"{path} is not the file {Path(archive) / 'MANIFEST.json'} pins: rebuild or "
                               "re-extract the pack, then export the tasks again.")
    return dataset.filter(lambda doc: doc["kind"] == "scored")


def _clip_bytes(archive: str, doc: dict[str, Any], rel: str) -> bytes:
    data = (Path(archive) / rel).read_bytes()
    expected = (doc.get("sha256") or {}).get(rel)
    if hashlib.sha256(data).hexdigest() != expected:
        raise ArchiveError(f"{doc['id']}: {rel} does not match its sha256 in the pack: rebuild or re-extract the pack.")
    return data


def doc_to_audio(archive: str, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Each clip as one dict both audio paths of lmms-eval read: `array` (float32; channels averaged, as a mono model
    hears them) with `sampling_rate` for its qwen2_audio backend, and `url` (the WAV itself as a data: URL, stereo
    kept) with `type` "audio", which its chat backends (openai) send as an audio_url part."""
    import soundfile as sf

    clips = []
    for rel in doc["audio"]:
        data = _clip_bytes(archive, doc, rel)
        samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
        clips.append({"type": "audio", "url": "data:audio/wav;base64," + base64.b64encode(data).decode("ascii"),
                      "array": samples.mean(axis=1), "sampling_rate": int(rate),
                      "path": str(Path(archive) / rel)})
    return clips


def doc_to_text(doc: dict[str, Any], kwargs: dict[str, Any] | None = None) -> str:
    """Our prompt, with lmms-eval's pre_prompt/post_prompt where a task or model config sets them."""
    kwargs = kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['prompt']}{kwargs.get('post_prompt', '')}"


def process_results(doc: dict[str, Any], results: list[str | None]) -> dict[str, float]:
    """The harness's strict rules on the reply: accuracy credits only an answered, right option (null counts as wrong,
    as in the paper); the shares refused and unparsed say how much of the wrong was no answer at all."""
    from acousticbench.benchmarks.acoustic.judge import judge_reply
    from acousticbench.core.records import Reply

    text = (results[0] if results else None) or ""  # lmms-eval hands a failed request over as ""
    status, chosen = "unparsed", None
    if text.strip():
        judgement = judge_reply(Reply(text=text), doc["prompt"])
        status, chosen = judgement.status, judgement.chosen
    return {"accuracy": float(status == "answered" and chosen == doc["answer"]),
            "refused": float(status == "refused"), "unparsed": float(status == "unparsed")}
