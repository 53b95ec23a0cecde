"""What a command will cost before anything is spent (--dry-run's closing plan), and what a run did spend (its
metrics.json): questions, requests (one per question: retries, which only failures cause, are not counted), seconds of
audio sent, for API models the tokens and price (models/prices.py), and the wall time at the chosen concurrency."""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from acousticbench.core.errors import UserError
from acousticbench.models.limits import Limits, seconds_sent
from acousticbench.models.prices import (Price, audio_tokens, contradicts_itself, price_table, split_usage,
                                         text_tokens, usd)
from acousticbench.run.catalog import get_model
from acousticbench.core.environment import safe_name, same_name

TRANSCRIPT_TOKENS = 25  # a cascade's text step reads one transcript line per clip: a guess, short for these clips
# seconds per request when no earlier run of the model measured it: rough figures to replace by a first small run
DECLARED_LATENCY_S = {"oracle": 0.05, "baselines": 0.0, "local_server": 0.5, "openai_compat": 1.0, "openai_api": 2.0,
                      "gemini": 8.0, "cascade": 3.0, "human": 4.0}  # a person: listening, then a click


@dataclass(frozen=True)
class RunPlan:
    label: str
    model: str
    questions: int
    requests: int
    audio_s: float
    tokens: tuple[int, int, int] | None  # (input text, input audio, output); None: not an API model, or no price
    usd: float | None
    latency_s: float
    latency_from: str  # "declared", or the run folder(s) it was measured in
    concurrency: int


def _priced(entry, api_model: str | None) -> list[tuple[str, str]]:
    """(step, provider model id) of each paid step: the API model, or a cascade's speech-to-text and text model."""
    settings = entry.settings
    if "text_model" in settings:
        stt = [("stt", settings["stt_model"])] if settings.get("stt") == "openai" else []
        return stt + [("text", settings["text_model"])]
    model = api_model or settings.get("api_model")
    return [("audio", model)] if model else []


def estimate(entry, api_model: str | None, prompts: list, seconds: list[list[float]]) -> tuple[tuple | None, float | None]:
    """Estimated (input text, input audio, output) tokens and USD of the prompts; (None, None) for an unpriced model."""
    table, steps = price_table(), _priced(entry, api_model)
    if not steps or any(model not in table for _, model in steps):
        return None, None
    text = audio = output = 0
    cost = 0.0
    for step, model in steps:
        price: Price = table[model]
        t = 0 if step == "stt" else sum(text_tokens(p.text) + (TRANSCRIPT_TOKENS * len(p.audio) if step == "text" else 0)
                                        for p in prompts)
        a = sum(audio_tokens(price, s) for s in seconds) if step != "text" else 0
        o = len(prompts) * price.output_tokens
        text, audio, output, cost = text + t, audio + a, output + o, cost + usd(price, t, a, o)
    return (text, audio, output), cost


def _default_concurrency(entry) -> int:
    """What the run would have in flight: the registry's setting, else its backend's default (a missing extra is the
    same one line as for the run itself)."""
    return entry.settings.get("concurrency") or entry.backend_class().default_concurrency


@lru_cache(maxsize=64)  # a sweep plans many runs of one model: its latest runs are read once
def measured_latency(results_dir: Path, model: str, runs: int = 3) -> tuple[float, str] | None:
    """The mean latency of the answered requests of this model's latest runs under results_dir."""
    from acousticbench.run.results import config_or_empty, started

    # its own runs by their config.json (the glob also finds a model whose name starts alike), the latest by instant
    folders = sorted((p for p in Path(results_dir).glob(f"{safe_name(model)}-*") if (p / "responses.jsonl").is_file()
                      and same_name(str(config_or_empty(p).get("spec", {}).get("model")), model)),
                     key=started)[-runs:]
    latencies = []
    for folder in folders:
        for line in (folder / "responses.jsonl").read_bytes().split(b"\n"):  # not splitlines: U+2028 in a reply
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("status") == "answered" and record.get("latency_s"):
                latencies.append(record["latency_s"])
    if not latencies:
        return None
    return sum(latencies) / len(latencies), f"measured over {len(latencies)} answers in {', '.join(f.name for f in folders)}"


def plan_run(spec, items: list) -> RunPlan:
    entry = get_model(spec.model)
    prompts = [prompt for _, prompt in items]
    limits = entry.settings.get("limits") or Limits()
    seconds = [seconds_sent(limits, p.audio) for p in prompts]
    tokens, cost = estimate(entry, spec.settings.api_model, prompts, seconds)
    measured = measured_latency(spec.settings.results_dir, spec.model)
    module = entry.backend.split(":")[0].rsplit(".", 1)[-1]
    latency, source = measured or (DECLARED_LATENCY_S.get(module, 1.0), "declared")
    fixed = spec.settings.concurrency if isinstance(spec.settings.concurrency, int) else None  # auto: its starting point, at least
    return RunPlan(spec.label(), spec.model, len(items), len(prompts), sum(map(sum, seconds)), tokens, cost, latency,
                   source, fixed or _default_concurrency(entry))


def wall_s(plans: list[RunPlan]) -> float:
    """Runs of one model share one queue; the models of a sweep run at once, so the slowest one sets the time."""
    total = 0.0
    for model in dict.fromkeys(p.model for p in plans):
        mine = [p for p in plans if p.model == model]
        total = max(total, math.ceil(sum(p.requests for p in mine) / mine[0].concurrency) * mine[0].latency_s)
    return total


def _clock(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _cells(p: RunPlan | None, plans: list[RunPlan]) -> tuple[str, ...]:
    group = plans if p is None else [p]
    priced = [q for q in group if q.tokens is not None]
    tokens = [sum(q.tokens[i] for q in priced) for i in range(3)]
    text_in = f"{tokens[0] + tokens[1]:,} ({tokens[0]:,} + {tokens[1]:,})" if priced else "-"
    money = f"{sum(q.usd for q in priced):.4f}" if priced else "-"
    how = "" if p is None else f" ({p.latency_s:.2f} s/request {p.latency_from}; {p.concurrency} in flight)"
    return ("total" if p is None else p.label, str(sum(q.questions for q in group)),
            str(sum(q.requests for q in group)), f"{sum(q.audio_s for q in group):.1f}", text_in,
            f"{tokens[2]:,}" if priced else "-", money, _clock(wall_s(group)) + how)


def format_plan(plans: list[RunPlan]) -> str:
    header = ("run", "questions", "requests", "audio s", "input tokens (text + audio)", "output tokens", "USD",
              "wall time")
    rows = [header] + [_cells(p, plans) for p in plans] + ([_cells(None, plans)] if len(plans) > 1 else [])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["Plan (nothing sent): one request per question, retries not counted (only failures cause them); tokens "
             "and USD are estimates for API models (models/prices.py, ACOUSTICBENCH_PRICES)"]
    return "\n".join(lines + ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows])


def power_lines(runs: list[tuple]) -> list[str]:
    """The plan's last lines: per cell (task, variant), how small a difference between two models run this way (the
    same questions and seeds) the paired test by question finds at 80% power, under Assumptions stated with it.
    `runs`: (spec, the ids of its scored items, what they are called, the kind of run whose items are its own or
    None: Benchmark.own_items) for each planned run."""
    from acousticbench.core.power import Assumptions, detectable_difference, power_line
    from acousticbench.core.run_identity import left_out_line

    from acousticbench.benchmarks import run_identity_of

    cells: dict[tuple[str, str], tuple[set, set]] = {}
    controls, own, kinds = [], [], set()
    for spec, scored, noun, own_items in runs:
        run = run_identity_of({"benchmark": spec.benchmark, "spec": spec.to_json()})
        if run.control:  # measured against its own real run, never in a comparison of two models
            controls.append(run)
            continue
        if own_items:  # its items follow its own answers: no other run asks them
            own.append(run)
            kinds.add(own_items)
            continue
        tags = "".join(f" [{t}]" for t in run.tags(first=False))  # a variant's seeds are its own
        ids, seeds = cells.setdefault((spec.cell + tags, noun), (set(), set()))
        ids.update(scored)
        seeds.add(spec.seed)
    assumed = Assumptions()
    out = [f"Power of a comparison of two models run like this (the same questions and seeds, paired by question): "
           f"it {assumed.text()} (docs/results.md#power)"] if cells else []
    for (cell, noun), (ids, seeds) in cells.items():
        found = detectable_difference(len(ids), assumed.difference_sd(len(seeds)))
        out.append(f"  {cell}: {power_line(len(ids), len(seeds), found, noun)}")
    if controls:
        out.append(left_out_line(controls, "this power", "Each is measured against its own real run ('Does the "
                                 "model listen?' in the leaderboard)."))
    if own:
        out.append(left_out_line(own, "this power", "What each measures comes with its own 95% interval.",
                                 (", ".join(sorted(kinds)), "each made of trials its own answers placed, so never "
                                  "compared question by question")))
    return out


def listening(spec) -> dict:
    """metrics.json's note on what the model could hear of the task (AcousticBench: a mono listener on dir), from the
    channels the catalog says it hears; {} when nothing needs saying or the model is not in the catalog."""
    from acousticbench.benchmarks import get_benchmark

    try:
        channels = get_model(spec.model).channels
    except UserError:  # not in the registry: what it hears is unknown
        return {}
    return get_benchmark(spec.benchmark).listener_note(spec, channels)


def spent(spec, records: list) -> dict:
    """metrics.json's record of what the run used: its records' token counts summed, and the price they come to."""
    tokens = Counter()
    for record in records:
        tokens.update(record.usage)
    try:
        entry = get_model(spec.model)
    except UserError:  # a model this harness no longer (or never) registered: its tokens still count
        return {"tokens": dict(sorted(tokens.items())), "price_usd": None, "price_basis": "not in the model registry"}
    steps, table = _priced(entry, spec.settings.api_model), price_table()
    billed = [(step, model) for step, model in steps if step != "stt"]  # a transcription's tokens are not on the record
    if not billed or billed[0][1] not in table:
        why = f"no price for {billed[0][1]} in models/prices.py" if billed else "not an API model"
        return {"tokens": dict(sorted(tokens.items())), "price_usd": None, "price_basis": why}
    if contradicting := sum(contradicts_itself(record.usage) for record in records):
        return {"tokens": dict(sorted(tokens.items())), "price_usd": None,
                "price_basis": f"not priced: the server's counts of {contradicting} replies contradict themselves "
                               "(more audio tokens than the prompt's total)"}
    model = billed[0][1]
    price = table[model]
    basis = f"{model} at USD {price.input_text}/{price.input_audio}/{price.output} per 1M (text in/audio in/out), " \
            f"read {price.read_on}" + ("; the speech-to-text step is not counted" if len(steps) > len(billed) else "")
    return {"tokens": dict(sorted(tokens.items())), "price_usd": round(usd(price, *split_usage(tokens)), 6),
            "price_basis": basis}
