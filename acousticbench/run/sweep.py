"""The one run path for every benchmark: a sweep of runs (cells), one backend session per model, one queue.

For each model of a command, its backend is created, opened once and closed once; all its cells (tasks, seeds,
shot counts) share one queue and its concurrency limits (acousticbench.engine.concurrency), so the server never idles
between cells. The models of a sweep run their sessions at the same time, each against its own endpoints, so a
sweep over N servers takes as long as its slowest model. Each cell has its own run folder, resume guard, writer and
metrics; a cell or a model that fails is reported without losing the others."""
from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acousticbench.core import provenance
from acousticbench.core.manifest import serving_manifest
from acousticbench.benchmarks import Benchmark, Grader, get_benchmark
from acousticbench.engine.slots import Slots
from acousticbench.engine.executor import RetryPolicy, RunAborted, run_items
from acousticbench.core.errors import UserError, deferred_interrupts, noted_signals, stop_if_signalled, stop_signals
from acousticbench.core.settings import RunSpec, SweepSettings
from acousticbench.run import context as run_context
from acousticbench.run.plan import listening, spent
from acousticbench.engine.progress import Progress
from acousticbench.run.results import CONFIG, METRICS, RESPONSES, ResponsesWriter, rewrite_sorted, write_json
from acousticbench.run.canary_run import canary_checked, heard
from acousticbench.run.cells import fingerprinted, warm_up
from acousticbench.run.prepared import PreparedSweep, prepared_sweep, session_key
from acousticbench.run.runfolder import Cell, now, open_run_dir, read_again, same_served_model
from acousticbench.run.received import counts, rate_of
from acousticbench.run.runlog import RunLog
from acousticbench.run.serving import Serving
from acousticbench.run.sweepfile import SweepFile


@dataclass(frozen=True)
class RunResult:
    spec: RunSpec
    run_dir: Path | None
    metrics: Any  # None when the cell failed
    records: list = field(repr=False)  # repr()s of results happen (asyncio formats its task at exit): keep them cheap
    resumed: int  # records kept from an earlier, interrupted run
    grader_note: str | None = None  # why labels may be missing (AcousticBench: no LLM judge available)
    error: str | None = None  # why the cell did not finish
    over_budget: str | None = None  # the run finished with more errors than --max-error-rate allows
    concurrency: dict | None = field(default=None, repr=False)  # the model session's limits when the run ended
    answered_elsewhere: list[str] = field(default_factory=list)  # other origins a redirect sent its requests to
    unheard: str | None = None  # the canary found that this run's audio does not reach the model (exit 1)

    @property
    def changed_clips(self) -> list:
        """The error records of questions whose clips changed after the pack was checked (never sent): exit 1."""
        from acousticbench.core.clip_pins import CHANGED

        return [r for r in self.records if r.status == "error" and CHANGED in (r.error or "")]

    @property
    def benchmark(self) -> Benchmark:
        return get_benchmark(self.spec.benchmark)


@dataclass(frozen=True)
class Session:
    """What the cells of one model share: its open backend, its slots (one queue), each benchmark's grader, its
    progress bar."""

    backend: Any
    slots: Slots
    policy: RetryPolicy
    graders: dict[str, Grader | None]  # benchmark name -> the grader its runs share (None: it needs none)
    bar: Any
    opened: Callable[[], None] = lambda: None  # a run folder opened: the sweep file is written from then on


async def _run_cell(cell: Cell, session: Session) -> RunResult:
    spec, started = cell.spec, time.monotonic()
    note = getattr(session.graders.get(cell.bench.name), "note", None)
    run_dir, log = None, None
    # from the moment the folder exists, an interrupt marks it: one landing while the folder, the sweep file or
    # run.log opened left a folder without config.json, or one whose config said neither finished nor interrupted
    try:
        with deferred_interrupts():
            run_dir, kept = open_run_dir(cell, session.backend, session.graders.get(cell.bench.name))
        stop_if_signalled()  # a signal whose exception a library swallowed while the run was set up
        session.opened()
        log = RunLog(run_dir)  # start, settings, retries, failures and the end: what a tee'd terminal cannot show
        log.start(spec.label(), cell.config, len(kept))
        try:
            new = await _ask(cell, session, run_dir, kept, log)
        except RunAborted as err:
            log.line(f"stopped: {err}")
            return RunResult(spec, run_dir, None, [], len(kept), note, error=str(err))
        result = await _finish(cell, session, run_dir, sorted(kept + new, key=lambda r: r.id), len(kept), started)
        log.line(f"finished: {cell.bench.summary_line(result)}" + (f"; {result.over_budget}" if result.over_budget else ""))
        return result
    except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl-C, SIGTERM, SIGHUP: say so where the run is
        if run_dir is None:
            raise
        if log is not None:
            log.line("interrupted: its finished records are kept; --resume asks the rest")
        now_read = read_again(cell, session.backend, session.graders.get(cell.bench.name))
        write_json(run_dir / CONFIG, {**cell.config, **now_read, "interrupted_at": now()})
        raise
    finally:
        if log is not None:
            log.close()


async def _ask(cell: Cell, session: Session, run_dir: Path, kept: list, log: RunLog) -> list:
    """The cell's questions not kept from an earlier run, asked through the model's queue; each record written as
    it arrives, each failure in run.log, the bar told which run it came from."""
    spec, bench = cell.spec, cell.bench
    done = {r.id for r in kept}
    session.bar.update(len(kept))
    run = spec.label().removeprefix(f"{spec.model} on ")  # the bar already names the model
    writer = ResponsesWriter(run_dir / RESPONSES)
    items = [item for item in cell.prepared.items if item[0].id not in done]
    source = cell.prepared.source

    def on_record(record) -> None:
        writer.append(record)
        failed = record.status == "error"
        if failed:
            log.line(f"{record.id}: failed after {record.attempts} attempt(s): {record.error}")
        session.bar.show(run, failed)

    try:
        new = await run_items(session.backend.presentation_order(items), session.backend,
                              slots=session.slots, policy=session.policy,
                              to_record=fingerprinted(
                                  bench.record_maker(spec, cell.prepared, session.graders.get(bench.name)),
                                  session.backend.merge_over, rate_of(spec), (cell.canary or {}).get("channels") == 1),
                              on_record=on_record, max_error_rate=spec.settings.max_error_rate, bar=session.bar, log=log.line,
                              feeds=source.feeds(run_dir, kept) if source is not None else ())
    finally:
        writer.close()
    rewrite_sorted(run_dir / RESPONSES, sorted(kept + new, key=lambda r: r.id), writer.lines)
    return new


async def _finish(cell: Cell, session: Session, run_dir: Path, records: list, kept: int, started: float) -> RunResult:
    """metrics.json and the final config.json of a cell whose questions all have a record."""
    spec, bench = cell.spec, cell.bench
    stop_if_signalled()  # a signal whose exception a library swallowed while the answers came: never marked finished
    # in a worker thread: the psychometric fit (and numpy's first import) must not stall the queue of other runs
    metrics = await asyncio.to_thread(bench.metrics, spec, records)
    metrics = metrics.model_copy(update={**spent(spec, records), **listening(spec), **heard(cell, metrics),
                                         **counts(records)})
    write_json(run_dir / METRICS, metrics.model_dump(mode="json"))
    harness = {**cell.config["harness"], "packages": provenance.package_versions()}  # what the run ended up using
    concurrency = {**session.slots.summary(), "remote": session.backend.adaptive_concurrency,
                   "note": "the model session's, shared by every run of this model in the command"}
    now_read = read_again(cell, session.backend, session.graders.get(bench.name))  # a redirect may have moved them
    made = cell.prepared.source.counted(records) if cell.prepared.source is not None else {}  # asked as it went
    config = {**cell.config, **now_read, **made, "harness": harness, "finished_at": now(),
              "duration_s": round(time.monotonic() - started, 3), "concurrency": concurrency}
    stop_if_signalled()
    write_json(run_dir / CONFIG, {**config, "manifest": serving_manifest(config)})
    errors = sum(1 for r in records if r.status == "error")
    over = (f"{errors} of {len(records)} failed ({errors / len(records):.1%}), over --max-error-rate "
            f"{spec.settings.max_error_rate:.0%}" if records and errors / len(records) > spec.settings.max_error_rate else None)
    moved = config["backend"] if isinstance(config.get("backend"), dict) else {}
    elsewhere = sorted({*moved.get("answered_from", []), *moved.get("redirected", {}).values()})
    return RunResult(spec, run_dir, metrics, records, resumed=kept,
                     grader_note=getattr(session.graders.get(bench.name), "note", None), over_budget=over,
                     concurrency=concurrency, answered_elsewhere=elsewhere, unheard=cell.canary_error)


async def _model_session(cells: list[Cell], backend, graders, bar, on_result,
                         opened: Callable[[], None] = lambda: None, around: tuple = ()) -> list[RunResult]:
    """Open the model's backend once (before any run folder exists: a missing key or a dead server leaves nothing
    behind), run all its cells through one queue inside the `around` contexts (the canary), close it once."""
    async with run_context.opened(backend, cells[0].spec.settings.concurrency) as context, AsyncExitStack() as stack:
        same_served_model(cells, backend)  # --resume: the server still serves the model the run was answered by
        session = Session(backend, context.slots, context.policy, graders, bar, opened)
        for checked in around:
            await stack.enter_async_context(checked(cells, context))
        warming = warm_up(cells)

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


def run_sweep(specs: list, on_result: Callable[[RunResult], None] = lambda r: None,
              progress: bool | Progress | None = None, sweep: SweepSettings | None = None) -> list[RunResult]:
    """A command's sweep, under its SweepSettings (the defaults where not given): its serving (--serve slurm's jobs,
    submitted once every check has passed, cancelled however it ends) around the prepared sweep, and the canary
    around each model session; the cells run by run_cells."""
    sweep = sweep or SweepSettings()
    serving = Serving([session_key(spec) for spec in specs], sweep, specs[0].settings.archive)
    with prepared_sweep(specs, serving) as prepared, serving.submitted():
        return run_cells(prepared, on_result, progress, around=(canary_checked(sweep, prepared.cells),))


def run_cells(sweep: PreparedSweep, on_result: Callable[[RunResult], None] = lambda r: None,
              progress: bool | Progress | None = None, around: tuple = ()) -> list[RunResult]:
    """Run every cell; a model whose backend cannot open fails its cells (alone, it is the command's error). The
    sweep file names every cell as it finishes; `progress`: bars (None: as the reporter says), or the command's
    Progress; `around`: contexts each model session runs inside once its backend is open (the canary)."""
    results: list[RunResult] = []
    file = SweepFile(sweep.cells[0].spec.settings.results_dir, [c.spec for c in sweep.cells])
    bars = progress if isinstance(progress, Progress) else Progress(progress)

    def finished(result: RunResult) -> None:
        file.finished(result)
        on_result(result)

    try:
        # the coroutine returns nothing: asyncio.run formats its main task (result included) once it is done
        asyncio.run(_sweep(sweep, bars, finished, results, file.open, around))
        stop_if_signalled()  # a signal whose exception a library swallowed on the way out: never closed as finished
    except BaseException:
        with noted_signals(*stop_signals()):  # a second Ctrl-C or SIGTERM must not leave the sweep file "running"
            file.close(results, interrupted=True)
        raise
    file.close(results, interrupted=False)
    return results


async def _sweep(sweep: PreparedSweep, bars: Progress, on_result, results: list[RunResult], opened, around) -> None:
    """Every model's session at once, each with its bar; results in command order."""
    groups, backends, graders = sweep.groups, sweep.backends, sweep.graders
    bars.start({key: (key[0], sum(len(c.prepared.items) + (c.prepared.source.planned() if c.prepared.source else 0)
                                  for c in group)) for key, group in groups.items()})  # adaptive runs: at most

    async def session(key, group: list[Cell]) -> list[RunResult]:
        try:
            return await _model_session(group, backends[key], graders, bars.bar(key), on_result, opened, around)
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
        bars.close()
        for grader in graders.values():
            if grader is not None:
                await grader.aclose()


def run_one(spec, progress: bool | None = None) -> RunResult:
    """One run; raises RunAborted when it stopped on its error budget."""
    [result] = run_sweep([spec], progress=progress)
    if result.error:
        raise RunAborted(result.error)
    return result
