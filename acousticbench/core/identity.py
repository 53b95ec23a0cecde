"""What makes two runs of one model the same thing to average: judge mode and model, rules version, API model id,
served model id and prompt style, read from a run's config.json (or a reference's summary.json)."""
from __future__ import annotations

from typing import Any

Identity = tuple[tuple[str, str], ...]
FIELDS = ("judge", "judge_model", "rules", "api_model", "served_model", "prompt_style")
_NAMES = {"judge": "judge", "judge_model": "judge model", "rules": "rules", "api_model": "api model",
          "served_model": "served", "prompt_style": "prompt"}


def run_identity(config: dict[str, Any]) -> Identity:
    """The fields of a run that change what its numbers mean; absent ones are left out (older runs, local models)."""
    spec, judge, backend = config.get("spec") or {}, config.get("judge") or {}, config.get("backend") or {}
    mode = judge.get("mode")
    values = {"judge": mode, "judge_model": judge.get("model") if mode in ("auto", "llm") else None,
              "rules": judge.get("rules_version") if mode in ("auto", "rules") else None,
              "api_model": spec.get("api_model"),
              "served_model": backend.get("served_model_id") or backend.get("model_id"),
              "prompt_style": spec.get("prompt_style")}
    return tuple((k, str(values[k])) for k in FIELDS if values[k])


def differences(identities: list[Identity]) -> dict[Identity, str]:
    """For runs of one model with several identities: each identity named by the fields in which they differ
    ('judge rules', 'judge llm, judge model gpt-4o-mini'); '' when there is only one."""
    unique = list(dict.fromkeys(identities))
    if len(unique) < 2:
        return {i: "" for i in unique}
    as_dicts = [dict(i) for i in unique]
    varying = [k for k in FIELDS if len({d.get(k) for d in as_dicts}) > 1]
    return {i: ", ".join(f"{_NAMES[k]} {d[k]}" for k in varying if k in d) for i, d in zip(unique, as_dicts)}


def row_labels(entries) -> dict[tuple[str, Identity], str]:
    """(model, identity) -> a row's name: the model, and how its identity differs where it ran in several ways."""
    by_model: dict[str, list[Identity]] = {}
    for e in entries:
        by_model.setdefault(e.model, []).append(e.identity)
    return {(model, i): model + (f" [{d}]" if d else "") for model, ids in by_model.items()
            for i, d in differences(ids).items()}
