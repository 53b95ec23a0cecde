"""Second chances for finished runs of any benchmark: label the null answers again (rejudge.py, through the
benchmark's relabeller), or ask the model again (rerun_nones.py). Both go through the run's benchmark, named in its
config.json."""
from __future__ import annotations

import argparse
import json
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acousticbench.benchmarks import BENCHMARKS, Benchmark, Option, benchmark_of_config, get_benchmark, spec_from_config
from acousticbench.engine.executor import progress_bar, run_items
from acousticbench.core.errors import UserError
from acousticbench.run.cells import fingerprinted, with_control
from acousticbench.run.received import counts, rate_of
from acousticbench.run.results import (
    CONFIG, METRICS, RESPONSES, RunLock, read_config, read_records, rewrite_sorted, write_json,
)
from acousticbench.run.runfolder import command_line, now

BACKUP_SUFFIX = ".orig"


@dataclass(frozen=True)
class RunFile:
    """A responses.jsonl with its run folder's config and benchmark (needed to rewrite metrics.json)."""

    path: Path
    config: dict
    bench: Benchmark
    records: list
    torn: tuple = ()  # readers.TornLine: a last line a crash cut, whose question must be asked again, never dropped
    lock: Any = field(default=None, compare=False, repr=False)  # the run folder's RunLock, held until the command ends

    @classmethod
    def load(cls, path: Path) -> "RunFile":
        path = path / RESPONSES if path.is_dir() else path
        config_path = path.parent / CONFIG
        if not path.is_file() or not config_path.is_file():
            raise UserError(f"{path} is not the responses.jsonl of a run folder (with its config.json beside it).")
        lock = RunLock(path.parent, "then run this command again")  # a run writing it would lose what this writes
        config = read_config(path.parent)
        bench = benchmark_of_config(config)
        torn: list = []
        records = read_records(path, bench.record_type, torn)
        for line in torn:
            if line.item_id is None:
                raise UserError(f"{line.describe()} and names no question: run `acousticbench run ... --resume` on "
                                "that run to ask it again; nothing was changed.")
        return cls(path, config, bench, records, tuple(torn), lock)

    def backup(self) -> Path:
        """Keep the first original beside the file, before any model or judge call (a folder that cannot take it
        fails here, not after the calls are paid for); a second run keeps the true original."""
        backup = self.path.with_name(self.path.name + BACKUP_SUFFIX)
        if not backup.exists():
            try:
                shutil.copy2(self.path, backup)
            except OSError as err:
                raise UserError(f"cannot write {backup} ({err.strerror or err}), the backup kept before anything is "
                                "changed: make the run folder writable, or copy it somewhere writable.") from None
        return backup

    def spec(self, **overrides: Any):
        return spec_from_config(self.config, **overrides)

    def is_null(self, record: Any) -> bool:
        return getattr(record, self.bench.label_field) is None


def add_benchmark_options(parser: argparse.ArgumentParser,
                          declared: Callable[[Benchmark], Sequence[Option]]) -> list[Option]:
    """Every registered benchmark's own options on this tool (`declared` picks them from a benchmark) as flags in a
    group named for it; a flag two benchmarks declare is added once. Returns them, for options_given."""
    added: dict[str, Option] = {}
    for name in BENCHMARKS:
        new = [option for option in declared(get_benchmark(name)) if option.flag not in added]
        group = parser.add_argument_group(f"{name} runs") if new else parser
        for option in new:
            group.add_argument(option.flag, default=argparse.SUPPRESS, choices=option.choices, help=option.help)
            added[option.flag] = option
    return list(added.values())


def options_given(args: argparse.Namespace, options: list[Option]) -> dict[str, Any]:
    """dest -> value of each benchmark option, a URL among them checked first (one line naming its flag)."""
    from acousticbench.core import checks

    values = {option.dest: vars(args).get(option.dest, option.default) for option in options}
    for option in options:
        if option.url and values[option.dest]:
            checks.check_url(values[option.dest], option.flag)
    return values


def refuse_foreign_options(args: argparse.Namespace, runs: list[RunFile],
                           declared: Callable[[Benchmark], Sequence[Option]]) -> None:
    """A benchmark's option given when none of the files is one of its runs would do nothing: one line, before any
    file is touched."""
    ours = {option.flag for run in runs for option in declared(run.bench)}
    for flag in sorted({o.flag for name in BENCHMARKS for o in declared(get_benchmark(name))} - ours):
        if flag.lstrip("-").replace("-", "_") in vars(args):
            owners = [name for name in BENCHMARKS if flag in {o.flag for o in declared(get_benchmark(name))}]
            raise UserError(f"{flag} applies to {' and '.join(owners)} runs, and none of the files given is one: drop "
                            "it, or give such a run.")


def status_counts(run: RunFile, records: list) -> Counter:
    counts = Counter(r.status for r in records)
    counts["null answers"] = sum(1 for r in records if run.is_null(r))
    return counts


def change_line(name: str, run: RunFile, after: list) -> str:
    old, new = status_counts(run, run.records), status_counts(run, after)
    keys = ("answered", "unparsed", "refused", "error", "null answers")
    return f"{name}: " + ", ".join(f"{k} {old[k]} -> {new[k]}" for k in keys if old[k] or new[k] or k != "unparsed")


def canary_mark(folder: Path) -> dict[str, Any]:
    """The canary's mark on the run (metrics.json's listener), kept: relabelling does not change what was heard."""
    try:
        listener = json.loads((folder / METRICS).read_text(encoding="utf-8")).get("listener")
    except (OSError, ValueError):
        return {}
    return {"listener": listener} if isinstance(listener, str) and listener.startswith("canary:") else {}


def save(run: RunFile, records: list, what: str, settings: dict[str, Any] | None = None,
         said: dict[str, Any] | None = None) -> None:
    """Replace the file atomically (after run.backup()), rewrite metrics.json, and add to config.json's history what
    was done (`what`), when, by which command, and what changed; `settings`: the run's settings the relabelling
    changed (AudioICL's scoring), written into config.json's spec and used for metrics.json; `said`: more for the
    history entry (the judge that read the answers, and where its verdicts came from)."""
    run.backup()
    rewrite_sorted(run.path, records)
    from acousticbench.run.plan import listening, spent

    spec = run.spec(**(settings or {}))
    metrics = run.bench.metrics(spec, sorted(records, key=lambda r: r.id))
    metrics = metrics.model_copy(update={**spent(spec, records), **listening(spec), **counts(records),
                                         **canary_mark(run.path.parent)})  # reruns add tokens
    write_json(run.path.parent / METRICS, metrics.model_dump(mode="json"))
    before = {r.id: r for r in run.records}
    changed = [r for r in records if r != before.get(r.id)]
    entry = {"what": what, "command": command_line(), "time": now(),
             "changed": len(changed), "statuses": change_line("", run, records).lstrip(": "), **(said or {})}
    config = {**run.config, "history": [*run.config.get("history", []), entry]}
    if settings:
        entry["settings"] = settings
        config["spec"] = {**config["spec"], **settings}
    write_json(run.path.parent / CONFIG, config)


def to_ask_again(run: RunFile, records: list, include: frozenset[str]) -> list:
    """The records a rerun asks again: errors; refusals when `include` has "refused"; answers nothing could be read
    from (a null label whatever the status says) when it has "unparsed". Asking those again resamples a model until
    a label appears, so only when asked to."""
    def unreadable(r) -> bool:
        return r.status not in ("error", "refused") and run.is_null(r)

    return [r for r in records if r.status == "error" or (r.status == "refused" and "refused" in include)
            or ("unparsed" in include and unreadable(r))]


@dataclass(frozen=True)
class Questions:
    """What a rerun asks again of one run: its spec, its pack's prepared items, those to ask and the records they
    replace."""

    spec: Any
    prepared: Any
    items: list
    replacing: dict  # question id -> the record asked again (none for a line a crash cut)


def questions_to_ask(run: RunFile, records: list, archive: Path | None,
                     include: frozenset[str] = frozenset()) -> Questions:
    """The records to_ask_again picks and the lines a crash cut, as the run's benchmark asks them (a control run's
    with its control's audio, never the real clips)."""
    spec = run.spec(archive=archive)
    todo = {r.id: r for r in to_ask_again(run, records, include)}
    have = {r.id for r in records}
    cut = {line.item_id for line in run.torn} - have  # a line a crash cut: its question is asked again, not dropped
    prepared = run.bench.prepare(spec, {})
    if spec.control is not None:
        prepared = with_control(prepared, spec.control, run.bench)
    return Questions(spec, prepared, [item for item in prepared.items if item[0].id in todo or item[0].id in cut], todo)


async def ask_again(run: RunFile, records: list, asked: Questions, context: Any, grader) -> list:
    """One more request for each of `asked`'s items through the model's run context (run/context.py: the retry
    policy and endpoints a run has); attempts add up, the record notes what it was, everything else is the new
    answer's."""
    spec, todo = asked.spec, asked.replacing
    bar = progress_bar(len(asked.items), None)
    try:
        fresh = await run_items(asked.items, context.backend, slots=context.slots, policy=context.policy,
                                to_record=fingerprinted(run.bench.record_maker(spec, asked.prepared, grader),
                                                        context.backend.merge_over, rate_of(spec)),
                                on_record=lambda r: None, bar=bar)
    finally:
        bar.close()
    by_id = {r.id: r for r in records}
    for record in fresh:
        old = todo.get(record.id)
        was = old.status if old else "a line cut short by a crash"
        by_id[record.id] = record.model_copy(update={"attempts": (old.attempts if old else 0) + record.attempts}).with_note(
            f"re-asked by rerun_nones.py: was {was}")
    return list(by_id.values())
