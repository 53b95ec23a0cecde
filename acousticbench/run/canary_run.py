"""The canary's place in a run (on by default, --no-canary): its probes asked once per served or API model before its
runs, under a short policy of their own (one attempt each, seconds, not the run's retries), so a stalling server
delays the start by seconds; what it finds missing is one line, exit 1, and a mark on each run it invalidates."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from typing import Any

from acousticbench.core.reporter import warn
from acousticbench.core.records import Prompt
from acousticbench.engine.retry import RetryPolicy
from acousticbench.run.canary import QUESTIONS, finding, label, mono_line, probes, verdict

ASKS = frozenset({"served", "openai", "gemini"})  # backends that hand a model the audio as it is
PROBE_TIMEOUT_S = 6.0  # one probe's request; a tone question takes a served model well under a second
DEADLINE_S = 8.0  # every probe at once: a stalling server delays the start by this much, never more
UNHEARD_AUDIO = "canary: the model did not hear its audio; accuracy here is not a measure of listening"
UNHEARD_CLIP = "canary: the model did not hear both clips; a two-clip task is at chance by construction"


def _entry(model: str) -> Any:
    """The registry's entry of the model, or None for one it does not know."""
    from acousticbench.core.errors import UserError
    from acousticbench.run.catalog import get_model

    try:
        return get_model(model)
    except UserError:
        return None


def applies(cells: list, on: bool = True) -> str | None:
    """None where the canary asks this model; else why not, in words (`on`: --canary, the default)."""
    spec = cells[0].spec
    if not on:
        return "off (--no-canary)"
    entry = _entry(spec.model)
    if entry is None:  # a backend given in code, not in the registry: its backend name decides (ASKS)
        return None
    if entry.family == "local":
        return f"{spec.model} is a local model: nothing between the harness and it can drop audio"
    limits = entry.settings.get("limits")
    if limits is not None and limits.merge_over == 1:
        return f"{spec.model} takes one audio input, so its clips are merged and the two-clip probes do not apply"
    return None


async def ask_probes(backend: Any, policy: RetryPolicy, slots: Any, seed: int) -> dict[str, Any]:
    """Every probe through the model's queue (its concurrency limit holds), each asked once within PROBE_TIMEOUT_S,
    all within DEADLINE_S; the verdict."""
    from acousticbench.engine.executor import ask

    short = replace(policy, max_attempts=1, timeout_s=min(policy.timeout_s, PROBE_TIMEOUT_S), max_overloads=0,
                    max_retry_after_s=0.0)
    asked = {pid: Prompt(benchmark="canary", question_id=f"canary_{pid}", task="canary", seed=seed, audio=paths,
                         text=QUESTIONS[kind], answer_space=["A", "B"]) for pid, kind, paths, _ in probes()}
    tasks = {pid: asyncio.ensure_future(ask(backend, p, short, slots)) for pid, p in asked.items()}
    done, late = await asyncio.wait(tasks.values(), timeout=DEADLINE_S)
    for task in late:
        task.cancel()
    await asyncio.gather(*late, return_exceptions=True)
    answers, failed = {}, {}
    for pid, task in tasks.items():
        if task in late:
            failed[pid] = f"no answer within the canary's {DEADLINE_S:g} s"
        elif task.result().reply is None:
            failed[pid] = task.result().error
        else:
            answers[pid] = label(task.result().reply.text)
    return verdict(answers, failed)


def _two_clips(cell: Any) -> bool:
    return any(len(prompt.audio) > 1 for _, prompt in cell.prepared.items)


def _marks(cell: Any, found: dict[str, Any], declared_mono: bool) -> tuple[str | None, bool]:
    """(the note that marks this run invalid, or None; whether it needs attention: exit 1)."""
    if found.get("hears_audio") is False:
        return UNHEARD_AUDIO, True
    if found.get("hears_both_clips") is False and _two_clips(cell):
        return UNHEARD_CLIP, True
    mono = found.get("channels") == 1 and cell.bench.listener_note(cell.spec, 1)
    return (None, bool(mono) and not declared_mono)  # a model the registry calls mono was marked so already


def canary_checked(sweep: Any) -> Callable[[list, Any], AbstractAsyncContextManager[None]]:
    """The canary of a command (its SweepSettings: --canary, --no-canary) as a context around each model session's
    runs (run/context.py's open context): its probes asked before them."""
    @asynccontextmanager
    async def checked(cells: list, context: Any) -> AsyncIterator[None]:
        await before_runs(cells, context.backend, context.policy, context.slots, sweep)
        yield

    return checked


async def before_runs(cells: list, backend: Any, policy: RetryPolicy, slots: Any, sweep: Any) -> None:
    """Ask the probes once per model session where they apply; give each cell the verdict (config.json), its mark
    (metrics.json's listener note) and, where the audio does not reach the model, the line that makes the command
    exit 1 (printed once)."""
    if not cells:
        return
    spec = cells[0].spec
    why_not = applies(cells, sweep.canary) or (None if backend.backend_name in ASKS else
                                 f"{spec.model} does not hand the model its audio as sent ({backend.backend_name})")
    if why_not is not None:
        entry = _entry(spec.model)
        local = entry is not None and entry.family == "local"
        asked = "canary" in sweep.model_fields_set  # given on the command line: say it was not asked
        if sweep.canary and (asked or not local):  # a served model it cannot check: say so by default too
            warn(f"note: {spec.model}: the canary does not apply: {why_not}.")
        for cell in cells:
            cell.canary = {"verdict": "skipped", "why": why_not}
        return
    found = await ask_probes(backend, policy, slots, spec.seed)
    _tell(spec.model, found, _judged(cells, found))


def _judged(cells: list, found: dict[str, Any]) -> list[str]:
    """Give each cell the verdict and its mark; the tasks whose runs need attention (exit 1)."""
    entry = _entry(cells[0].spec.model)
    declared_mono = entry is not None and entry.channels == 1
    attention = []
    for cell in cells:
        cell.canary = found
        cell.unheard, needs = _marks(cell, found, declared_mono)
        if needs:
            attention.append(cell.spec.task)
    what = finding(found) or mono_line(found)
    for cell in cells:
        cell.canary_error = what if cell.spec.task in attention else None
    return list(dict.fromkeys(attention))


def _tell(model: str, found: dict[str, Any], attention: list[str]) -> None:
    """One line on stderr: the error that exits 1, or a warning of what was found or could not be asked."""
    line, missing = finding(found), found.get("no_answer")
    if attention:
        warn(f"error: {model}: canary: {line or mono_line(found)}; runs marked invalid: {', '.join(attention)}. "
              "Check how the server takes audio (docs/running.md#does-the-audio-arrive), or rerun with --no-canary "
              "if you know it hears what is sent.")
    elif line is not None:  # e.g. a dropped second clip in a command of one-clip tasks
        warn(f"warning: {model}: canary: {line}")
    elif missing and missing["count"] < missing["of"]:  # none answered: the run's own errors say why
        warn(f"warning: {model}: canary: {missing['count']} of {missing['of']} probes got no answer "
              f"({missing['error']}): whether its audio arrives is not known")


def heard(cell: Any, metrics: Any) -> dict[str, Any]:
    """metrics.json's listener note from the canary where it ran: its mark of a run it invalidates, else the
    channels it heard (they replace the catalog's); {} where it did not run."""
    if not cell.canary or cell.canary.get("verdict") == "skipped":
        return {}
    cleared = {"listener": None} if "listener" in type(metrics).model_fields else {}
    if getattr(cell, "unheard", None) and cleared:
        return {"listener": cell.unheard}
    if cell.canary.get("channels") is None:
        return {}
    return {**cleared, **cell.bench.listener_note(cell.spec, cell.canary["channels"])}
