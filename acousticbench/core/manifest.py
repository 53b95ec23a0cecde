"""The serving manifest of a run (config.json's `manifest`): what served its answers (server and engine versions, the
model's revision, the chat template's hash, the processor's sampling rate, the generation settings applied, the
sections of its benchmark's grader that say how answers were labelled, the container), and every difference between
two runs' manifests, so drift in answers has a named cause."""
from __future__ import annotations

from typing import Any

ENGINES = ("vllm", "transformers", "torch", "openai", "google-genai")  # the packages that shape an answer


def serving_manifest(config: dict[str, Any]) -> dict[str, Any]:
    """The manifest from a run's config.json sections (backend, harness, and those its `labelled_by` names); absent
    facts are left out."""
    backend, harness = config.get("backend") or {}, config.get("harness") or {}
    serving = backend.get("serving") or {}
    packages = harness.get("packages") or {}
    generation = {"temperature": backend.get("temperature"), "max_tokens": backend.get("max_tokens"),
                  **(backend.get("sampling_sent") or {})}
    decoding = backend.get("server_decoding")
    manifest = {
        "server": backend.get("server") or backend.get("backend"), "server_version": backend.get("server_version"),
        "model": backend.get("served_model_id") or backend.get("model_id") or backend.get("api_model"),
        **serving,  # revision, chat template hash, processor sampling rate, context length, container, as served
        "generation": {k: v for k, v in generation.items() if v is not None},
        "server_decoding": decoding if isinstance(decoding, dict) else None,
        "system_prompt": backend.get("system_prompt"),
        "labelling": {name: _without_note(config.get(name)) for name in config.get("labelled_by", ())} or None,
        "harness_version": harness.get("version"),
        "engines": {name: packages[name] for name in ENGINES if packages.get(name)} or None,
    }
    return {k: v for k, v in manifest.items() if v not in (None, {}, "")}


def _without_note(section: object) -> object:
    """A grader's config.json section (its model, prompt and rules versions) without its free-text note."""
    return {k: v for k, v in section.items() if k != "note"} if isinstance(section, dict) else section


def flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _shown(value: Any) -> str:
    if value is None:
        return "(none)"
    text = str(value)
    is_hash = len(text) == 64 and all(c in "0123456789abcdef" for c in text)
    return text[:12] if is_hash else text if len(text) <= 60 else text[:57] + "..."


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Each fact in which two manifests differ, as 'fact: A's -> B's' (a fact one side lacks shows as '(none)')."""
    fa, fb = flat(a), flat(b)
    return [f"{key}: {_shown(fa.get(key))} -> {_shown(fb.get(key))}" for key in sorted(fa.keys() | fb.keys())
            if fa.get(key) != fb.get(key)]


def manifest_of(config: dict[str, Any]) -> dict[str, Any]:
    """A run's manifest: the one it wrote, else made from its config.json now (runs older than the field)."""
    return config.get("manifest") or serving_manifest(config)
