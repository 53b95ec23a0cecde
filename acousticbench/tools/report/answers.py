"""Every answer of every run, packed for the question browser: columns of small integers that index shared tables
(texts, clips, questions), so 114,000 records fit in a few megabytes and filter in milliseconds."""
from __future__ import annotations

import base64
import os
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

from acousticbench.benchmarks import get_benchmark
from acousticbench.core.records import RecordBase
from acousticbench.tools.report.gather import Run
from acousticbench.tools.model_grid import row_key, row_manifests, row_names
from acousticbench.tools.report.paired import Scored, paired_data

NONE = -1  # a column's "nothing here"


class _Table:
    """Distinct values, each stored once; a value's index is its position."""

    def __init__(self):
        self.values: list = []
        self._index: dict = {}

    def add(self, value) -> int:
        if value is None:
            return NONE
        if value not in self._index:
            self._index[value] = len(self.values)
            self.values.append(value)
        return self._index[value]


def _label(record: RecordBase) -> str | None:
    """The record's answer label, in the field its benchmark names (chosen, prediction)."""
    return getattr(record, get_benchmark(record.benchmark).label_field)


def _flips(runs: list[Run]) -> set[tuple]:
    """(model, task, variant, first-N, id) whose label differs between seeds."""
    labels: dict[tuple, set] = defaultdict(set)
    for run in runs:
        e = run.entry
        for r in run.records:
            labels[(e.model, e.task, e.variant, e.facets, e.max_samples, e.manifest, r.id)].add(_label(r))
    return {key for key, seen in labels.items() if len(seen) > 1}


class ClipSources:
    """The address of each clip as the page will load it: a path relative to the report (default), or the clip's
    bytes as a data: URL (--embed-audio)."""

    def __init__(self, out: Path, embed: bool):
        self.folder = os.path.abspath(Path(out).parent)
        self.embed = embed
        self.missing = 0
        self._known: dict[tuple[str, str], str] = {}  # a clip is heard by every model and seed: address it once

    def source(self, root: str, path: str) -> str:
        key = (root, path)
        if key not in self._known:
            self._known[key] = self._source(root, path)
        return self._known[key]

    def _source(self, root: str, path: str) -> str:
        full = os.path.normpath(os.path.join(root, path))
        if self.embed:
            try:
                data = Path(full).read_bytes()
            except OSError:
                self.missing += 1
                return ""
            return "data:audio/wav;base64," + base64.b64encode(data).decode("ascii")
        return quote(os.path.relpath(full, self.folder).replace(os.sep, "/"))


def _clip_columns(facts, texts: _Table) -> tuple:
    """(captions, parameters, gap) as the questions table holds them: text as indices into the texts table."""
    return (tuple(texts.add(c) for c in facts.captions),
            tuple((texts.add(name), tuple(texts.add(v) for v in values)) for name, values in facts.params), facts.gap_s)


def browser_data(runs: list[Run], clips: ClipSources) -> dict[str, Any]:
    """The browser's tables: runs, questions, texts, clips, one column per record field, and the paired view's."""
    texts, clip_table, questions = _Table(), _Table(), _Table()
    flips = _flips(runs)
    names = row_names(run.entry for run in runs)  # runs of one model made differently pair as different rows
    scored: list[Scored] = []
    nouns: dict[str, str] = {}  # task -> what its items are called
    seen: dict[tuple, tuple] = {}
    columns: dict[str, list] = {name: [] for name in
                                ("run", "q", "status", "response", "label", "correct", "method", "by", "error",
                                 "notes", "ref", "flip", "latency", "paired")}
    run_rows = []
    for index, run in enumerate(runs):
        e, bench = run.entry, get_benchmark(run.entry.benchmark)
        variant = bench.views.variant_label(e.variant)
        task = f"{e.task} {variant}" if variant else e.task
        run_rows.append({"bench": e.benchmark, "model": e.model, "task": e.task, "seed": e.seed, "facets": dict(e.facets),
                         "variant": variant, "folder": str(e.run_dir), "ref": run.reference_file,
                         "row": names[row_key(e)], "cell": task})  # the paired view's row and task
        nouns[task] = bench.item_noun
        for r in run.records:
            facts = bench.views.answer_facts(r)
            clip_ids = tuple(clip_table.add(clips.source(run.audio_root, a)) for a in facts.audio)
            item = (r.id, texts.add(facts.prompt), clip_ids, texts.add(facts.truth), facts.level, facts.kind, facts.split)
            if item not in seen:  # the clips' facts are the item's: asked of its first answer only
                seen[item] = _clip_columns(bench.views.clip_facts(r), texts)
            q = questions.add(item + seen[item])
            paired = facts.correct is not None and bench.scored(r) and not e.control  # never in a model's q
            if paired:
                scored.append(Scored(names[row_key(e)], task, (e.manifest, r.id), e.seed, facts.correct))
            ref = NONE if run.reference is None or r.id not in run.reference else texts.add(run.reference[r.id] or "")
            row = (index, q, texts.add(r.status), texts.add(r.response), texts.add(_label(r)),
                   NONE if facts.correct is None else int(facts.correct), texts.add(facts.method), texts.add(facts.by),
                   texts.add(r.error), texts.add("; ".join(r.notes) or None), ref,
                   int((e.model, e.task, e.variant, e.facets, e.max_samples, e.manifest, r.id) in flips),
                   None if r.latency_s is None else round(r.latency_s, 3), int(paired))
            for name, value in zip(columns, row):
                columns[name].append(value)
    return {"runs": run_rows, "texts": texts.values, "clips": clip_table.values,
            "questions": questions.values, "records": columns,
            "paired": paired_data(scored, nouns, row_manifests(run.entry for run in runs))}
