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
from acousticbench.tools.model_grid import model_rows, pairs_by_item, row_key, row_manifests, row_names
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


def _label(record: RecordBase, field: str) -> str | None:
    """The record's answer label, in the field its benchmark names (chosen, prediction: Benchmark.label_field)."""
    return getattr(record, field)


class _Flips:
    """Which answers' question (model, task, variant, split, first-N, pack, id) got different labels from different
    seeds; gathered while the records pass once, told once every run was seen."""

    def __init__(self):
        self.questions = _Table()
        self.labels: dict[int, set] = defaultdict(set)
        self.column: list[int] = []  # each answer's question, in the order answers were added

    def add(self, key: tuple, label: str | None) -> None:
        question = self.questions.add(key)
        self.labels[question].add(label)
        self.column.append(question)

    def told(self) -> list[int]:
        flipped = {question for question, seen in self.labels.items() if len(seen) > 1}
        return [int(question in flipped) for question in self.column]


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


def _run_row(run: Run, row: str) -> dict[str, Any]:
    """A run as the browser names it, with the paired view's row and task (its cell)."""
    e = run.entry
    variant = get_benchmark(e.benchmark).views.variant_label(e.variant)
    return {"bench": e.benchmark, "model": e.model, "task": e.task, "seed": e.seed, "facets": dict(e.facets),
            "variant": variant, "folder": str(e.run_dir), "ref": run.reference_file, "row": row,
            "cell": f"{e.task} {variant}" if variant else e.task, "own": e.own_items is not None}


def browser_data(runs: list[Run], clips: ClipSources) -> dict[str, Any]:
    """The browser's tables: runs, questions, texts, clips, one column per record field, and the paired view's."""
    texts, clip_table, questions = _Table(), _Table(), _Table()
    flips = _Flips()
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
        run_rows.append(_run_row(run, names[row_key(e)]))
        task = run_rows[-1]["cell"]
        nouns[task] = bench.item_noun
        for r in run.records:
            facts = bench.views.answer_facts(r)
            clip_ids = tuple(clip_table.add(clips.source(run.audio_root, a)) for a in facts.audio)
            item = (r.id, texts.add(facts.prompt), clip_ids, texts.add(facts.truth), facts.level, facts.facets)
            if item not in seen:  # the clips' facts are the item's: asked of its first answer only
                seen[item] = _clip_columns(bench.views.clip_facts(r), texts)
            q = questions.add(item + seen[item])
            paired = facts.correct is not None and bench.scored(r) and pairs_by_item(e)  # never in a model's q
            if paired:
                scored.append(Scored(names[row_key(e)], task, (e.manifest, r.id), e.seed, facts.correct))
            theirs = None if run.reference is None else run.reference.get(r.id)  # the same id may be another trial
            ref = NONE if theirs is None or not bench.same_item(r, theirs) else texts.add(theirs.get(bench.label_field)
                                                                                          or "")
            label = _label(r, bench.label_field)
            row = (index, q, texts.add(r.status), texts.add(r.response), texts.add(label),
                   NONE if facts.correct is None else int(facts.correct), texts.add(facts.method), texts.add(facts.by),
                   texts.add(r.error), texts.add("; ".join(r.notes) or None), ref,
                   0,  # flips: told once every run was read
                   None if r.latency_s is None else round(r.latency_s, 3), int(paired))
            own = (e.seed,) if e.own_items else ()  # its trials are its own: another seed's same id is another trial
            flips.add((e.model, e.task, e.variant, e.facets, e.max_samples, e.manifest, r.id, *own), label)
            for name, value in zip(columns, row):
                columns[name].append(value)
    columns["flip"] = flips.told()
    return {"runs": run_rows, "texts": texts.values, "clips": clip_table.values,
            "questions": questions.values, "records": columns,
            "paired": paired_data(scored, nouns, row_manifests(run.entry for run in runs),
                                  model_rows(run.entry for run in runs)[1])}
