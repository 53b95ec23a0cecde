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
UNHEARD_CLIP = ("canary: the model did not hear both clips; its answers to a task of two or more clips do not "
                "measure listening")


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


def canary_checked(sweep: Any, cells: list) -> Callable[[list, Any], AbstractAsyncContextManager[None]]:
    """The canary of a command (its SweepSettings: --canary, --no-canary) as a context around each model session's
    runs (run/context.py's open context): its probes asked before them, once per model and server of the command's
    `cells` however many sessions share that server."""
    shared = AskedOnce(cells)

    @asynccontextmanager
    async def checked(session_cells: list, context: Any) -> AsyncIterator[None]:
        await before_runs(session_cells, context.backend, context.policy, context.slots, sweep, shared)
        yield

    return checked


class AskedOnce:
    """The canary's verdict per model and server of a command, shared by the backend sessions that ask it (a sweep
    over both benchmarks opens one per benchmark's settings): its probes asked once, its line said once, naming every
    run of the command it invalidates."""

    def __init__(self, cells: list):
        self.cells: dict[tuple, list] = {}
        for cell in cells:
            self.cells.setdefault(server_of(cell.spec), []).append(cell)
        self.verdicts: dict[tuple, asyncio.Future] = {}
        self.said: set[tuple] = set()


def server_of(spec: Any) -> tuple:
    """What the probes' answers depend on: the model and where it is asked (not the runs' token limits)."""
    s = spec.settings
    return spec.model, s.endpoint, None if s.endpoints_from is None else str(s.endpoints_from), s.api_model


async def before_runs(cells: list, backend: Any, policy: RetryPolicy, slots: Any, sweep: Any,
                      shared: AskedOnce | None = None) -> None:
    """Ask the probes once per model and server of the command where they apply (the first session to get here asks,
    the others wait for its verdict); give each cell the verdict (config.json), its mark (metrics.json's listener
    note) and, where the audio does not reach the model, the line that makes the command exit 1 (printed once)."""
    if not cells:
        return
    shared = shared or AskedOnce(cells)
    spec = cells[0].spec
    key = server_of(spec)
    why_not = applies(cells, sweep.canary) or (None if backend.backend_name in ASKS else
                                               f"{spec.model} does not hand the model its audio as sent "
                                               f"({backend.backend_name})")
    if why_not is not None:
        _skipped(cells, why_not, key not in shared.said, sweep)
        shared.said.add(key)
        return
    if key not in shared.verdicts:
        asked = shared.verdicts[key] = asyncio.get_running_loop().create_future()
        try:
            found = await ask_probes(backend, policy, slots, spec.seed)
        except BaseException:
            asked.cancel()  # the sessions waiting for it stop with this one: the command is going down
            raise
        asked.set_result(found)
        _tell(spec.model, found, _attention(shared.cells.get(key, cells), found))
    _judged(cells, await shared.verdicts[key])


def _skipped(cells: list, why_not: str, say: bool, sweep: Any) -> None:
    """config.json's skipped canary on each cell; the line saying why where the model is served (or --canary asked)."""
    spec = cells[0].spec
    entry = _entry(spec.model)
    local = entry is not None and entry.family == "local"
    asked = "canary" in sweep.model_fields_set  # given on the command line: say it was not asked
    if say and sweep.canary and (asked or not local):  # a served model it cannot check: said by default too
        warn(f"note: {spec.model}: the canary does not apply: {why_not}.")
    for cell in cells:
        cell.canary = {"verdict": "skipped", "why": why_not}


def _declared_mono(model: str) -> bool:
    entry = _entry(model)
    return entry is not None and entry.channels == 1


def _attention(cells: list, found: dict[str, Any]) -> list[str]:
    """The tasks of `cells` whose runs the verdict invalidates: the command exits 1 for them."""
    mono = _declared_mono(cells[0].spec.model)
    return list(dict.fromkeys(cell.spec.task for cell in cells if _marks(cell, found, mono)[1]))


def _judged(cells: list, found: dict[str, Any]) -> None:
    """Give each cell the verdict, its mark, and the finding that makes it need attention (exit 1)."""
    mono, what = _declared_mono(cells[0].spec.model), finding(found) or mono_line(found)
    for cell in cells:
        cell.canary = found
        cell.unheard, needs = _marks(cell, found, mono)
        cell.canary_error = what if needs else None


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
