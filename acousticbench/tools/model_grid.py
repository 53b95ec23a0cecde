"""Model against model across a results folder: every two rows (a model run one way: its identity, split, first N and
pack) on every cell both ran, paired by question with seeds averaged within a question, and Benjamini-Hochberg's
q-value over the whole grid of comparisons, for the leaderboard and the report."""
from __future__ import annotations

import csv
import io
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, replace
from itertools import combinations

from acousticbench.benchmarks import Entry, get_benchmark
from acousticbench.core.identity import identity_of, named_rows
from acousticbench.core.manifest import differences as manifest_differences, manifest_of
from acousticbench.core.power import detectable_text
from acousticbench.core.significance import (METHOD, Answers, PairedDifference, Pairing, benjamini_hochberg,
                                             pair_questions, paired_difference)
from acousticbench.core.tables import md_table, pct
from acousticbench.run.results import RESPONSES

FDR = 0.05  # a difference is called where its q-value is below this


def row_key(e: Entry) -> tuple:
    """What a leaderboard row is: runs that differ in any of these are never pooled, nor paired as one side."""
    return e.benchmark, e.model, e.identity, e.facets, e.max_samples or 0, e.manifest


def row_names(entries: Iterable[Entry]) -> dict[tuple, str]:
    """row_key -> its name: the model, and where one model has several rows in a benchmark, how each differs
    from the others ('M [served org/m-2]', 'M [first 20]', 'M [pack 1a2b3c4d]'): every row is shown, none chosen
    silently."""
    entries = list(entries)
    full = {row_key(e): (*e.identity, *identity_of({**dict(e.facets), "first": e.max_samples,
                                                   "pack": e.manifest[:8]})) for e in entries}
    runs = {row_key(e): e.run for e in entries}  # a control or a variant is always named as such
    by_model: dict[tuple[str, str], list[tuple]] = {}
    for key in full:  # a model's rows in two benchmarks share its name: their tasks never meet
        by_model.setdefault(key[:2], []).append(key)
    names = {}
    for (_, model), keys in by_model.items():
        named = named_rows(model, [full[k] for k in keys], {full[k]: runs[k] for k in keys})
        names.update({k: named[full[k]] for k in keys})
    return names


def pairs_by_item(e: Entry) -> bool:
    """Whether a run's answers pair item by item with another row's: a control is measured against its own real run
    ('Does the model listen?'), and a run whose items are its own (an adaptive run's trials, placed by its answers)
    shares no item with another run, whatever the ids say."""
    return not e.control and e.own_items is None


def model_rows(entries: Iterable[Entry]) -> tuple[list[Entry], str]:
    """The runs model is compared against model on, and the lines naming the runs left out ('' when none): controls
    and runs whose items are their own never join the grid, nor its q-values."""
    from acousticbench.core.run_identity import left_out_line

    entries = list(entries)
    left = [e.run for e in entries if e.control and e.run]
    own = [e for e in entries if e.own_items is not None]
    kinds = ", ".join(sorted({e.own_items for e in own}))
    where = "the model-against-model grid and its q-values"
    lines = [left_out_line(left, where, "The leaderboard measures them against their real runs under 'Does the "
                           "model listen?'."),
             left_out_line([e.run for e in own if e.run], where, "The leaderboard lists what they measured in a "
                           "table of their own.", (kinds, "each made of trials its own answers placed, so no other "
                                                   "run answered the same ones"))]
    return [e for e in entries if pairs_by_item(e)], " ".join(line for line in lines if line)


def cell_of(e: Entry) -> str:
    """The cell a run fills: its task, with its variant where its benchmark has one ('AudioCount k=3')."""
    variant = get_benchmark(e.benchmark).views.variant_label(e.variant)
    return f"{e.task} {variant}" if variant else e.task


@dataclass(frozen=True)
class CellTest:
    """Row A against row B on one cell."""

    a: str
    b: str
    cell: str
    pairing: Pairing
    result: PairedDifference
    items: str = "questions"  # what n counts (Benchmark.item_noun)
    q: float = 1.0  # Benjamini-Hochberg over every test of its grid


def grid_tests(answers: Mapping[tuple[str, str], Answers], nouns: Mapping[str, str] | None = None) -> list[CellTest]:
    """(row name, cell) -> its answers (question -> seed -> right): every two rows, in the order given, on each cell
    both have, with q-values over all of them; `nouns`: cell -> what its items are called."""
    rows = list(dict.fromkeys(row for row, _ in answers))
    cells = list(dict.fromkeys(cell for _, cell in answers))
    tests = []
    for a, b in combinations(rows, 2):
        for cell in cells:
            if (a, cell) in answers and (b, cell) in answers:
                pairing = pair_questions(answers[a, cell], answers[b, cell])
                result = paired_difference(pairing.counts)
                if result is not None:
                    tests.append(CellTest(a, b, cell, pairing, result, (nouns or {}).get(cell, "questions")))
    q = benjamini_hochberg([t.result.p_value for t in tests])
    return [replace(t, q=qi) for t, qi in zip(tests, q)]


def nouns_of(entries: Iterable[Entry]) -> dict[str, str]:
    """cell -> what its items are called (Benchmark.item_noun)."""
    return {cell_of(e): get_benchmark(e.benchmark).item_noun for e in entries}


def entry_answers(entries: list[Entry]) -> dict[tuple[str, str], dict[Hashable, dict[int, bool]]]:
    """(row name, cell) -> question -> seed -> right, read from each run's records through its benchmark's outcome
    (a question is its pack and id, so runs on different packs never pair)."""
    import json

    names = row_names(entries)
    out: dict[tuple[str, str], dict[Hashable, dict[int, bool]]] = {}
    for e in entries:
        if e.scores is not None:  # the results index holds them
            side = out.setdefault((names[row_key(e)], cell_of(e)), {})
            for item, right in e.scores():
                side.setdefault((e.manifest, item), {})[e.seed] = right
            continue
        path = e.responses or (e.run_dir / RESPONSES if e.run_dir else None)
        if path is None or not path.is_file():
            continue
        outcome, side = get_benchmark(e.benchmark).outcome, out.setdefault((names[row_key(e)], cell_of(e)), {})
        with path.open("rb") as lines:  # streamed, split at b"\n" alone: a reply's U+2028 is no line break
            for line in lines:
                if line.strip() and (correct := outcome(data := json.loads(line))) is not None:
                    side.setdefault((e.manifest, data["id"]), {})[e.seed] = bool(correct)
    return out


def row_manifests(entries: Iterable[Entry]) -> dict[str, dict]:
    """Row name -> its serving manifest (the `manifest` of the row's first run's config.json, already read with it;
    references have none, so their rows are absent)."""
    entries = list(entries)
    names, manifests = row_names(entries), {}
    for e in entries:
        if e.config is not None:
            manifests.setdefault(names[row_key(e)], manifest_of(e.config))
    return manifests


def served_otherwise(entries: list[Entry]) -> dict[tuple[str, str], list[str]]:
    """(row A, row B) -> each fact in which the two rows' serving manifests differ, as A's value -> B's: beside a
    changed answer, what may have caused it."""
    manifests = row_manifests(entries)
    return {(a, b): manifest_differences(manifests[a], manifests[b]) for a, b in combinations(manifests, 2)}


def _seeds(t: CellTest) -> str:
    p = t.pairing
    return ",".join(map(str, p.seeds)) if p.seeds else f"{len(p.seeds_a)} vs {len(p.seeds_b)}, none shared"


def markdown(tests: list[CellTest], served: Mapping[tuple[str, str], list[str]] | None = None) -> str:
    """The grid as a Markdown table with its key: what n counts, what the seeds do, the test and the FDR control;
    then, for each two rows compared, how they were served otherwise (`served`: served_otherwise)."""
    rows = [[t.a, t.b, t.cell, f"{r.questions} {t.items}", _seeds(t), pct(r.accuracy_a), pct(r.accuracy_b),
             f"{100 * r.difference:+.1f} [{100 * r.interval.low:+.1f}, {100 * r.interval.high:+.1f}]",
             f"{r.p_value:.3g}", f"{t.q:.3g}", "yes" if t.q < FDR else "no",
             detectable_text(r.detectable, r.questions)]
            for t in tests for r in [t.result]]
    table = md_table(["A", "B", "Task", "n", "Seeds", "A %", "B %", "A - B [95% interval]", "p", "q",
                      f"Different (q < {FDR:g})", "Detectable (80% power)"], rows)
    return (table + "\nn counts the questions (or episodes) both rows answered and scored; an item's answers are "
            "averaged over the seeds both rows ran, so a seed is never a new pair. A - B in points, its 95% interval "
            "Newcombe's score interval for paired proportions over the questions (never past 100 points); p: "
            f"{METHOD}; q: Benjamini-Hochberg over the {len(tests)} comparisons of "
            f"this table: calling only q < {FDR:g} keeps the expected share of false calls among them at {FDR:.0%} or "
            "less. Detectable: the true difference, in points, that this many questions and seeds find at 80% power "
            "(alpha 0.05, paired by question), taking the spread of the per-question differences seen here "
            "(acousticbench/core/power.py); 'none with n=...' where not even 100 points would be found.\n"
             + _served_lines(tests, served or {}))


def _served_lines(tests: list[CellTest], served: Mapping[tuple[str, str], list[str]]) -> str:
    pairs = [pair for pair in dict.fromkeys((t.a, t.b) for t in tests) if pair in served]
    if not pairs:
        return ""
    out = ["", "How each two rows were served otherwise (their serving manifests: server and engine versions, model "
           "revision, chat template, generation settings, judge; docs/results.md):"]
    for a, b in pairs:
        facts = served[a, b]
        out.append(f"- {a} vs {b}: " + ("; ".join(facts) if facts else "served alike"))
    return "\n".join(out) + "\n"


def to_csv(tests: list[CellTest]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["a", "b", "task", "n", "n_counts", "seeds", "accuracy_a", "accuracy_b", "difference",
                     "difference_low", "difference_high", "p", "q_bh", "detectable_80"])
    for t in tests:
        r = t.result
        writer.writerow([t.a, t.b, t.cell, r.questions, t.items, _seeds(t), f"{r.accuracy_a:.6f}",
                         f"{r.accuracy_b:.6f}", f"{r.difference:.6f}", f"{r.interval.low:.6f}",
                         f"{r.interval.high:.6f}", f"{r.p_value:.6g}", f"{t.q:.6g}",
                         "" if r.detectable is None or r.detectable > 1 else f"{r.detectable:.6f}"])
    return out.getvalue()
