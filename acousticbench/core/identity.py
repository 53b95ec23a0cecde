"""What makes two runs of one model the same thing to average: the harness's part (API model id, served model id,
decoding settings given) read from a run's config.json, joined with what its benchmark adds (Benchmark.identity: a
judge, a scoring, a prompt style). The pack, the split and the first N questions are the Entry's own fields."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Identity = tuple[tuple[str, str], ...]  # (what, value) in a row label's words: ("judge model", "gpt-4o-mini")


def harness_identity(config: dict[str, Any]) -> dict[str, Any]:
    """The settings of any run that change what its numbers mean: the API model id asked for, the model id served,
    decoding settings given on the command line (--temperature, --max-tokens) in place of the registry's, and the
    audio control it heard in place of the real clips."""
    spec, backend = config.get("spec") or {}, config.get("backend") or {}
    generation = spec.get("generation") or {}
    given = {what: str(generation[key]) for what, key in (("temperature", "temperature"), ("max tokens", "max_tokens"))
             if generation.get(key) is not None}  # 0.0 is a setting too: kept as text
    return {"api model": spec.get("api_model"),
            "served": backend.get("served_model_id") or backend.get("model_id"), **given,
            "control": spec.get("control")}  # a control run is never averaged with the real runs


def identity_of(values: Mapping[str, Any]) -> Identity:
    """An Identity of the values that are set; absent ones are left out (older runs, local models)."""
    return tuple((what, str(value)) for what, value in values.items() if value)


def differences(identities: list[Identity]) -> dict[Identity, str]:
    """For runs of one model with several identities: each identity named by the fields in which they differ
    ('judge rules', 'judge llm, judge model gpt-4o-mini'); '' when there is only one."""
    unique = list(dict.fromkeys(identities))
    if len(unique) < 2:
        return {i: "" for i in unique}
    as_dicts = [dict(i) for i in unique]
    varying = [k for k in _in_order(unique) if len({d.get(k) for d in as_dicts}) > 1]
    return {i: ", ".join(f"{k} {d[k]}" for k in varying if k in d) for i, d in zip(unique, as_dicts)}


def _in_order(identities: list[Identity]) -> list[str]:
    """Every field of the identities in the order their benchmark lists them (each identity leaves out the unset)."""
    order: list[str] = []
    for identity in identities:
        at = 0
        for what, _ in identity:
            if what not in order:
                order.insert(at, what)
            at = order.index(what) + 1
    return order


def row_labels(entries) -> dict[tuple[str, Identity], str]:
    """(model, identity) -> a row's name: the model, its control or variant always named (core/run_identity.py), and
    how its identity differs where it ran in several ways."""
    by_model: dict[str, list[Identity]] = {}
    runs = {}
    for e in entries:
        by_model.setdefault(e.model, []).append(e.identity)
        runs.setdefault((e.model, e.identity), getattr(e, "run", None))
    return {(model, i): name for model, ids in by_model.items()
            for i, name in named_rows(model, ids, {i: runs.get((model, i)) for i in ids}).items()}


def named_rows(model: str, identities: list[Identity], runs: Mapping[Identity, Any]) -> dict[Identity, str]:
    """Each identity's row name: the model with the tags of its run (a RunIdentity, or None for a reference), then the
    fields in which the identities differ that those tags do not already name."""
    shown = {i: runs[i].shown if runs.get(i) else frozenset() for i in identities}
    rest = {i: tuple(kv for kv in i if kv[0] not in shown[i]) for i in identities}
    named = differences(list(rest.values()))
    return {i: (runs[i].label(first=False) if runs.get(i) else model) + (f" [{named[rest[i]]}]" if named[rest[i]] else "")
            for i in identities}
