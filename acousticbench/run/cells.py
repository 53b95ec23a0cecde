"""How a command's specs become cells of the one run path: loaded and checked (a control's audio in place of the real
clips), grouped into one backend session per model, the graders their benchmarks share, each record's fingerprint of
what was sent, and the slow imports their metrics need, made while requests are out."""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace

from acousticbench.benchmarks import Grader, Prepared, get_benchmark
from acousticbench.run.runfolder import Cell


WARM_UP_AFTER_S = 1.0  # past the first wave of requests: an import during it slows the start


def warm_up(cells: list[Cell]) -> asyncio.TimerHandle:
    """Slow imports a run's metrics need (Benchmark.warm_up), made in a worker thread once requests flow, so the
    session's one run does not end waiting for them. In a sweep the first finished run's metrics import them
    mid-sweep anyway."""
    hooks = [c.bench.warm_up for c in cells] if len(cells) == 1 else []
    loop = asyncio.get_running_loop()
    return loop.call_later(WARM_UP_AFTER_S, lambda: [loop.run_in_executor(None, _quietly, hook) for hook in hooks])


def _quietly(hook: Callable[[], None]) -> None:
    """A warm-up is only a head start: if it fails, the metrics that need it fail where they are computed."""
    try:
        hook()
    except Exception:  # noqa: BLE001
        return None


def prepare_cells(specs: list) -> list[Cell]:
    """Load and check every run's items before any model starts, so a bad pack fails fast."""
    caches: dict[str, dict] = {}
    cells = []
    for spec in specs:
        bench = get_benchmark(spec.benchmark)
        prepared = bench.prepare(spec, caches.setdefault(bench.name, {}))
        cells.append(Cell(spec, bench, prepared if spec.control is None else with_control(prepared, spec.control, bench)))
    return cells


def with_control(prepared: Prepared, kind: str, bench) -> Prepared:
    """The run's items with the audio its control sends in place of the real clips, and config.json saying so; a
    swap's items are what its clips ask as sent (their key, their clip order), so its records score what was heard."""
    from acousticbench.core.audio_controls import CONTROLS, SENT_KEY, controlled

    items = [(item, controlled(prompt, kind)) for item, prompt in prepared.items]
    control = {"kind": kind, "what": CONTROLS[kind]}
    if kind == "swap":
        items = [(bench.swapped(item, sent), sent) for item, sent in items]
        control["scored_against"] = SENT_KEY
    return replace(prepared, items=items, config={**prepared.config, "control": control})


def groups_of(cells: list[Cell]) -> dict[tuple, list[Cell]]:
    """Cells by model and backend settings, in command order: each group is one backend session."""
    groups: dict[tuple, list[Cell]] = {}
    for cell in cells:
        overrides = tuple(sorted(cell.spec.backend_overrides().items(), key=str))
        groups.setdefault((cell.spec.model, overrides), []).append(cell)
    return groups


def fingerprinted(to_record: Callable, merge_over: int | None = None, rate=None,
                  heard_mono: bool = False) -> Callable:
    """The benchmark's record maker with, on each record, the fingerprint of the clips the backend sent (merged into
    one beyond its `merge_over`, Backend.merge_over) and, at the model's audio token `rate` (models/audio_tokens.py),
    what its server said it received of them; with `heard_mono` (the canary's finding), a note on each stereo clip
    heard as mono."""
    from acousticbench.models.fingerprint import sent
    from acousticbench.run.received import accounted

    async def stamped(item, prompt, outcome):
        from acousticbench.core.clip_pins import ClipChanged

        record = await to_record(item, prompt, outcome)
        try:  # on the loop, not in a worker thread: a thread still hashing when Ctrl-C lands delays the exit past a second
            return accounted(record.model_copy(update={"sent": sent(prompt, merge_over)}), rate, heard_mono)
        except ClipChanged:  # a clip not the pack's now: what went out, if anything did, was read (and checked) before
            return record

    return stamped


def make_graders(cells: list[Cell]) -> dict[str, Grader | None]:
    """One grader per benchmark of the command (AcousticBench: the A/B judge), from its runs' specs."""
    specs: dict[str, list] = {}
    for cell in cells:
        specs.setdefault(cell.bench.name, []).append(cell.spec)
    return {name: get_benchmark(name).grader(group) for name, group in specs.items()}
