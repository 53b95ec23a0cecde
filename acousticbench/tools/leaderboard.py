"""The leaderboard: finished runs and references of every registered benchmark, mean ± std over seeds; each benchmark
draws its own table (Benchmark.leaderboard_markdown / leaderboard_csv), headed by its name when several are present."""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from acousticbench.benchmarks import (BENCHMARKS, CSV_HEADER, Benchmark, Entry, benchmark_of_config, get_benchmark,
                                      run_identity_of)
from acousticbench.core.errors import UserError
from acousticbench.core.written_by import version_line
from acousticbench.run.results import CONFIG, METRICS, RESPONSES, being_written
from acousticbench.tools.results_index import ResultsIndex, read_files

if TYPE_CHECKING:
    from pydantic import BaseModel


def _warn(message: str) -> None:
    print(f"skipped: {message}", file=sys.stderr)


def run_entry(run_dir: Path, index: ResultsIndex | None = None) -> Entry | None:
    """The entry of a finished run folder of any benchmark, or None (with the reason on stderr) when it is not usable;
    read through the results `index` where given (the folder's files where they changed since)."""
    if not (run_dir / METRICS).is_file():
        _warn(f"{run_dir}: no {METRICS} yet (it is being written by a running command: wait for it to finish)"
              if being_written(run_dir) else f"{run_dir}: no {METRICS} (the run did not finish; continue it with --resume)")
        return None
    try:
        try:
            files = index.run_files(run_dir) if index is not None else read_files(run_dir)
        except UserError:  # a benchmark this harness does not have: read as without the index, said below
            files = read_files(run_dir)
        config = json.loads(files.config.decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        _warn(f"{run_dir}: unreadable ({err})")
        return None
    raw_metrics, lines, torn, damaged = files.metrics, files.lines, files.torn, files.damaged
    try:
        bench = benchmark_of_config(config)
    except UserError as err:  # a benchmark this harness does not have (a newer one wrote the run)
        _warn(version_line(run_dir, config) or f"{run_dir}: {err}")
        return None
    expected = bench.n_records(config)
    if damaged is not None:
        _warn(f"{run_dir / RESPONSES}:{damaged} is not a record (damaged): the run is left out; restore the file "
              f"from {RESPONSES}.orig if there is one, or rerun that run")
        return None
    if torn or lines < expected:
        _warn(f"{run_dir}: {RESPONSES} is truncated ({lines} of {expected} records)")
        return None
    metrics = _metrics(run_dir, bench, raw_metrics, config)
    if metrics is None:
        return None
    from acousticbench.tools.metrics_when_asked import MetricsWhenAsked

    own = bench.own_items(config)
    # a run whose items are its own has no accuracy to average (an adaptive run's trials sit near 75% by design)
    apart = {"accuracy": None, "accuracy_without_errors": None, "made_as": bench.made_as(config),
             "figure": bench.headline_text(metrics)} if own else {}
    return dataclasses.replace(bench.views.entry(run_dir, config, metrics), identity=bench.identity(config),
                               finished_at=config.get("finished_at"), run=run_identity_of(config), scores=files.scores,
                               invalid=files.invalid, lines=lines, own_items=own,
                               metrics=MetricsWhenAsked(raw_metrics, bench.metrics_type), **apart)


def _metrics(run_dir: Path, bench: Benchmark, raw: bytes, config: dict) -> BaseModel | None:
    """metrics.json as the benchmark's typed model, parsed here once; what every tool reads after. A file that does
    not validate is one line naming it and its first problem (fields added after a run was written have defaults)."""
    from pydantic import ValidationError

    try:
        return bench.metrics_type.model_validate_json(raw)
    except ValidationError as err:
        written = version_line(run_dir, config)  # another version's metrics: good data, never to be deleted
        if written:
            _warn(written)
            return None
        first = err.errors()[0]
        loc = ".".join(map(str, first["loc"]))  # empty when the file is not JSON at all
        where = f"{loc}: " if loc else ""
        more = f"; {err.error_count() - 1} more" if err.error_count() > 1 else ""
        # derived from responses.jsonl, which stays as it was: --resume writes it again, nothing needs deleting
        _warn(f"{run_dir}: {METRICS} is unreadable as {bench.name} metrics ({where}{first['msg']}{more}); its answers "
              "are intact: run its command again with --resume to write it again (the latest run of its model, task "
              "and seed)")
        return None


def reference_entries(root: Path) -> list[Entry]:
    """An entry per run of every reference folder (summary.json and its run files) under `root`; a damaged one is one
    line naming it."""
    from acousticbench.tools.reference import load_summary, read_reference

    entries = []
    for summary_path in sorted(root.rglob("summary.json")):
        summary = load_summary(summary_path.parent)
        bench = get_benchmark(summary.get("benchmark"))
        for run in summary["runs"]:
            records = list(read_reference(summary_path.parent / run["file"]).values())
            try:
                entry = bench.views.reference_entry(summary, run, records)
            except KeyError as err:  # a field its benchmark reads (a facet such as its split) is missing
                raise UserError(f"the reference summary {summary_path} has no {err}: restore it (git checkout "
                                "reference_trajectories/) or promote the runs again with --promote-reference.") from None
            entries.append(dataclasses.replace(entry, responses=summary_path.parent / run["file"]))
    return entries


def _identity(e: Entry) -> tuple:
    return e.benchmark, e.model, e.task, e.variant, e.facets, e.manifest, e.max_samples, e.made_as, e.seed


def with_references(entries: list[Entry], references: list[Entry]) -> list[Entry]:
    """The runs and the references, each run once: a run promoted into the references (the same model, task, split,
    pack, questions and seed) is the run folder's entry, not a second one."""
    seen = {_identity(e) for e in entries}
    return entries + [r for r in references if _identity(r) not in seen]


def collect(results_dirs: list[Path]) -> list[Entry]:
    """Finished runs; of several runs of the same (model, identity, task, split, archive, questions, seed) the one
    that finished last counts (config.json's finished_at; the folder name where a run has none), and a note on stderr
    names the one left out: a choice made, never silently."""
    latest: dict[tuple, Entry] = {}
    for results in results_dirs:
        run_dirs = sorted(p for p in results.iterdir() if p.is_dir() and (p / CONFIG).is_file())
        index = ResultsIndex(results)
        index.forget_missing({p.name for p in run_dirs})
        for run_dir in run_dirs:
            entry = run_entry(run_dir, index)
            if entry:
                key = (*_identity(entry), entry.identity)  # runs judged or served differently stay apart
                if key in latest:
                    kept, left = sorted((entry, latest[key]), key=_finish_order, reverse=True)
                    print(f"note: {left.run_dir} is an earlier run of the same model, task and seed, made the same "
                          f"way as {kept.run_dir}: the one that finished last counts", file=sys.stderr)
                    entry = kept
                latest[key] = entry
    return list(latest.values())


def _finish_order(entry: Entry) -> tuple[float, tuple[float, int]]:
    """When a run finished, as an instant (finished_at's text is local time in older runs: never compared as text),
    then when it started."""
    from acousticbench.core.instants import instant
    from acousticbench.run.results import started

    return instant(entry.finished_at) or 0.0, started(entry.run_dir) if entry.run_dir else (0.0, 0)


def model_index(model: str) -> int:
    """Registry order (as a paper table lists models), unknown models after."""
    from acousticbench.run.catalog import MODELS

    names = list(MODELS)
    return names.index(model) if model in names else len(names)


def by_benchmark(entries: list[Entry]) -> list[tuple[str, list[Entry]]]:
    """The entries of each benchmark present, in registration order."""
    return [(name, [e for e in entries if e.benchmark == name]) for name in BENCHMARKS
            if any(e.benchmark == name for e in entries)]


def real_and_controls(entries: list[Entry]) -> tuple[list[Entry], list[Entry]]:
    """The runs an accuracy table shows (real runs and variants, each named as such) and the control runs, whose
    audio was replaced: their accuracy is never the model's, so the tables leave them out and say so."""
    return [e for e in entries if not e.control], [e for e in entries if e.control]


CONTROLS_INSTEAD = "They are measured against their real runs under 'Does the model listen?'."


def markdown(entries: list[Entry]) -> str:
    """A table per benchmark present (headed by its name when several are), then the audio controls beside their real
    runs; the control runs are left out of the accuracy tables, with a line naming them."""
    from acousticbench.core.run_identity import left_out_line
    from acousticbench.tools import control_runs

    shown, left = real_and_controls(entries)
    sections = [(name, get_benchmark(name).views.leaderboard_markdown(group, model_index))
                for name, group in by_benchmark(shown)]
    listen = control_runs.markdown(entries)  # the audio controls beside their real runs, where there are any
    note = left_out_line([e.run for e in left if e.run], "the accuracy tables", CONTROLS_INSTEAD)
    tail = (f"\n{note}\n" if note else "") + (f"\n{listen}" if listen else "")
    if len(sections) == 1:
        return sections[0][1] + tail
    return "\n".join(f"## {name}\n\n{table}" for name, table in sections) + tail


def to_csv(entries: list[Entry]) -> str:
    """The accuracy of every real run and variant; control runs are left out, with a line on stderr naming them."""
    from acousticbench.core.run_identity import left_out_line

    shown, left = real_and_controls(entries)
    if left:
        print(f"note: {left_out_line([e.run for e in left if e.run], 'the CSV', CONTROLS_INSTEAD)}", file=sys.stderr)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for name, group in by_benchmark(shown):
        writer.writerows(get_benchmark(name).views.leaderboard_csv(group, model_index))
    return out.getvalue()
