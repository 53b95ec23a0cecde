"""The one run path for every benchmark: a sweep of runs (cells), one backend session per model, one queue.

For each model of a command, its backend is created, opened once and closed once; all its cells (tasks, seeds,
shot counts) share one queue and its concurrency limits (acousticbench.concurrency), so the server never idles
between cells. The models of a sweep run their sessions at the same time, each against its own endpoints, so a
sweep over N servers takes as long as its slowest model. Each cell has its own run folder, resume guard, writer and
metrics; a cell or a model that fails is reported without losing the others."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acousticbench import provenance
from acousticbench.benchmarks import Benchmark, Grader, get_benchmark
from acousticbench.concurrency import Setting
from acousticbench.slots import Slots
from acousticbench.engine import RetryPolicy, RunAborted, progress_bar, run_items
from acousticbench.errors import UserError, writable_folder
from acousticbench.catalog import get_model
from acousticbench.plan import listening, spent
from acousticbench.results import CONFIG, METRICS, RESPONSES, ResponsesWriter, rewrite_sorted, write_json
from acousticbench.runfolder import Cell, now, open_run_dir, resume_target


@dataclass(frozen=True)
class RunResult:
    spec: Any  # RunSpec or ICLRunSpec
    run_dir: Path | None
    metrics: Any  # None when the cell failed
    records: list = field(repr=False)  # repr()s of results happen (asyncio formats its task at exit): keep them cheap
    resumed: int  # records kept from an earlier, interrupted run
    grader_note: str | None = None  # why labels may be missing (AcousticBench: no LLM judge available)
    error: str | None = None  # why the cell did not finish
    over_budget: str | None = None  # the run finished with more errors than --max-error-rate allows
    concurrency: dict | None = field(default=None, repr=False)  # the model session's limits when the run ended

    @property
    def benchmark(self) -> Benchmark:
        return get_benchmark(self.spec.benchmark)


@dataclass(frozen=True)
class Session:
    """What the cells of one model share: its open backend, its slots (one queue), each benchmark's grader, the
    progress bar."""

    backend: Any
    slots: Slots
    policy: RetryPolicy
    graders: dict[str, Grader | None]  # benchmark name -> the grader its runs share (None: it needs none)
    bar: Any


async def _run_cell(cell: Cell, session: Session) -> RunResult:
    spec, bench = cell.spec, cell.bench
    grader = session.graders.get(bench.name)
    note = getattr(grader, "note", None)
    started = time.monotonic()
    run_dir, kept = open_run_dir(cell, session.backend, grader)
    done = {r.id for r in kept}
    writer = ResponsesWriter(run_dir / RESPONSES)
    items = [item for item in cell.prepared.items if item[0].id not in done]
    order = getattr(session.backend, "presentation_order", None)  # a person hears the questions shuffled by the seed
    try:
        new = await run_items(order(items) if order else items, session.backend,
                              slots=session.slots, policy=session.policy,
                              to_record=bench.record_maker(spec, cell.prepared, grader),
                              on_record=writer.append, max_error_rate=spec.max_error_rate, bar=session.bar)
    except RunAborted as err:
        return RunResult(spec, run_dir, None, [], len(kept), note, error=str(err))
    finally:
        writer.close()
    records = sorted(kept + new, key=lambda r: r.id)
    rewrite_sorted(run_dir / RESPONSES, records, writer.lines)
    # in a worker thread: the psychometric fit (and scipy's first import) must not stall the queue of other runs
    metrics = await asyncio.to_thread(bench.metrics, spec, records)
    metrics = metrics.model_copy(update={**spent(spec, records), **listening(spec)})  # tokens used, their price
    write_json(run_dir / METRICS, metrics.model_dump(mode="json"))
    harness = {**cell.config["harness"], "packages": provenance.package_versions()}  # what the run ended up using
    concurrency = {**session.slots.summary(), "remote": bool(getattr(session.backend, "adaptive_concurrency", False)),
                   "note": "the model session's, shared by every run of this model in the command"}
    write_json(run_dir / CONFIG, {**cell.config, "harness": harness, "finished_at": now(),
                                  "duration_s": round(time.monotonic() - started, 3), "concurrency": concurrency})
    errors = sum(1 for r in records if r.status == "error")
    over = (f"{errors} of {len(records)} failed ({errors / len(records):.1%}), over --max-error-rate "
            f"{spec.max_error_rate:.0%}" if records and errors / len(records) > spec.max_error_rate else None)
    return RunResult(spec, run_dir, metrics, records, resumed=len(kept), grader_note=note, over_budget=over,
                     concurrency=concurrency)


async def _model_session(cells: list[Cell], backend, graders, bar, on_result) -> list[RunResult]:
    """Open the model's backend once (before any run folder exists: a missing key or a dead server leaves nothing
    behind), run all its cells through one queue, close it once."""
    try:
        await backend.open()
        names = backend.endpoint_names() if hasattr(backend, "endpoint_names") else ["-"]
        slots = Slots(names, Setting.of(cells[0].spec.concurrency, backend))
        # a person may take a break: the Human backend waits for them (its retry settings), a server is timed out
        session = Session(backend, slots, RetryPolicy(**getattr(backend, "retry_settings", {})), graders, bar)
        warming = _warm_up(cells)

        async def reported(index: int, cell: Cell) -> RunResult:
            for _ in range(index):  # each later run sets up once the ones before it have their requests on the wire
                await asyncio.sleep(0)
            result = await _run_cell(cell, session)
            on_result(result)
            return result

        try:
            return list(await asyncio.gather(*(reported(i, cell) for i, cell in enumerate(cells))))
        finally:
            warming.cancel()
    finally:
        await backend.close()  # also when open() failed: it may have opened clients


WARM_UP_AFTER_S = 1.0  # past the first wave of requests: an import during it slows the start


def _warm_up(cells: list[Cell]) -> asyncio.TimerHandle:
    """Slow imports a run's metrics need (Benchmark.warm_up), made in a worker thread once requests flow, when the
    run's end is the session's end. In a sweep the first finished run's metrics import them mid-sweep anyway, and an
    extra import then cost 0.2 s (bench/bench_command.py)."""
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
        cells.append(Cell(spec, bench, bench.prepare(spec, caches.setdefault(bench.name, {}))))
    return cells


def _groups(cells: list[Cell]) -> dict[tuple, list[Cell]]:
    """Cells by model and backend settings, in command order: each group is one backend session."""
    groups: dict[tuple, list[Cell]] = {}
    for cell in cells:
        overrides = tuple(sorted(cell.spec.backend_overrides().items(), key=str))
        groups.setdefault((cell.spec.model, overrides), []).append(cell)
    return groups


def run_sweep(specs: list, on_result: Callable[[RunResult], None] = lambda r: None,
              progress: bool | None = None) -> list[RunResult]:
    """Run every spec; a model whose backend cannot open fails its cells (alone, it is the command's error)."""
    provenance.prefetch_git_state()  # for config.json, while the pack is loaded and checked
    cells = prepare_cells(specs)
    graders = make_graders(cells)
    groups = _groups(cells)
    backends = {key: get_model(key[0], group[0].spec.archive).create(**dict(key[1]))
                for key, group in groups.items()}  # keys and extras checked first
    for key, group in groups.items():
        check = getattr(backends[key], "check_prompts", None)  # a prompt over a model's limits stops the run here
        for cell in group if check else []:
            check([prompt for _, prompt in cell.prepared.items])
    for folder in dict.fromkeys(c.spec.results_dir for c in cells):
        writable_folder(folder, "results folder", "--results-dir")  # before anything is paid for
    try:
        for key, group in groups.items():
            for cell in group:
                resume_target(cell, backends[key].backend_name)
        results: list[RunResult] = []
        # the coroutine returns nothing: asyncio.run formats its main task (result included) once it is done
        asyncio.run(_sweep(groups, backends, graders, progress, on_result, results))
        return results
    finally:
        for cell in cells:
            if cell.lock is not None:
                cell.lock.release()


def make_graders(cells: list[Cell]) -> dict[str, Grader | None]:
    """One grader per benchmark of the command (AcousticBench: the A/B judge), from its runs' specs."""
    specs: dict[str, list] = {}
    for cell in cells:
        specs.setdefault(cell.bench.name, []).append(cell.spec)
    return {name: get_benchmark(name).grader(group) for name, group in specs.items()}


async def _sweep(groups, backends, graders, progress, on_result, results: list[RunResult]) -> None:
    """Every model's session at once; results in command order."""
    bar = progress_bar(sum(len(c.prepared.items) for group in groups.values() for c in group), progress)

    async def session(key, group: list[Cell]) -> list[RunResult]:
        try:
            return await _model_session(group, backends[key], graders, bar, on_result)
        except UserError as err:  # this model's server or key: the other models go on
            if len(groups) == 1:
                raise
            failed = [RunResult(cell.spec, None, None, [], 0, error=str(err)) for cell in group]
            for result in failed:
                on_result(result)
            return failed

    try:
        for grader in graders.values():
            if grader is not None:
                await grader.probe()  # a dead judge stops the command before any model call is paid for
        for done in await asyncio.gather(*(session(key, group) for key, group in groups.items())):
            results += done
    finally:
        bar.close()
        for grader in graders.values():
            if grader is not None:
                await grader.aclose()


def evaluate(spec, progress: bool | None = None) -> RunResult:
    """One run; raises RunAborted when it stopped on its error budget."""
    [result] = run_sweep([spec], progress=progress)
    if result.error:
        raise RunAborted(result.error)
    return result
