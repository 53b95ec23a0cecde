"""Two sides on the same questions, each one run or every seed of one model's cell: agreement, the changed answers,
and the paired test by question with seeds averaged inside a question (core/significance.py), never seeds as pairs."""
from __future__ import annotations

import json
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acousticbench.benchmarks import Benchmark, benchmark_of_config, benchmark_of_line
from acousticbench.core.errors import UserError
from acousticbench.core.power import power_line
from acousticbench.core.significance import Answers, PairedDifference, Pairing, paired_difference, pair_questions
from acousticbench.run.results import CONFIG, METRICS, RESPONSES, read_config, read_records
from acousticbench.tools.run_answers import Answer, RunAnswers

SAME_ACROSS_SIDES = ("task", "variant", "pack")  # else the same ids may name other questions


@dataclass(frozen=True)
class Run:
    """One run folder (or a responses.jsonl on its own), read, with what identifies it."""

    path: Path
    answers: list[Answer]  # one per id (the last line of each), in the order read_records gives its records
    bench: Benchmark
    seed: int | None
    facts: dict[str, str]  # model, task, variant, split, pack, first N and the benchmark's identity, where known
    own_items: str | None = None  # the kind of run whose items are its own (Benchmark.own_items): none pair
    config: dict[str, Any] = field(default_factory=dict)  # its config.json; empty for a responses.jsonl on its own


def load_run(path: Path, torn: list | None = None, reader: RunAnswers | None = None) -> Run:
    """A run folder or its responses.jsonl, with its benchmark (from config.json beside it, else its records); a last
    line a crash cut is collected in `torn` (readers.TornLine) for the caller to name. Its answers are read through
    `reader` (the results index where it can serve them)."""
    file = path / RESPONSES if path.is_dir() else path
    if not file.is_file():
        raise UserError(f"{path} is not a run folder or a responses.jsonl file.")
    config: dict[str, Any] = {}
    if (file.parent / CONFIG).is_file():
        config = read_config(file.parent)
        bench = benchmark_of_config(config)
        own = bench.own_items(config)
    else:
        try:  # a responses.jsonl on its own: its first record names its benchmark, and whether its items are its own
            with file.open("rb") as lines:  # the first record only, never the whole file
                first = json.loads(next((line for line in lines if line.strip()), b"{}"))
            bench = benchmark_of_line(first)
            own = bench.own_items_of_line(first)
        except (ValueError, AttributeError) as err:
            raise UserError(f"{file} is not a run's responses.jsonl ({type(err).__name__}): pass a run folder or its "
                            "responses.jsonl.") from None
    with RunAnswers() if reader is None else nullcontext(reader) as read:
        answers, named = read.read(file, bench, torn)
    seeds = {a.seed for a in answers}
    facts = {"model": named[0], "task": named[1]} if named else {}
    if config:
        facts.update(_config_facts(file.parent, config, bench))
    return Run(path, answers, bench, seeds.pop() if len(seeds) == 1 else None, facts, own, config)


def _config_facts(folder: Path, config: dict[str, Any], bench: Benchmark) -> dict[str, str]:
    """What a run's config.json (and metrics.json, through the benchmark's Entry) say about which questions it
    asked and how: its variant, split, pack, first N and the benchmark's identity."""
    facts = {what: value for what, value in bench.identity(config)}
    try:
        entry = bench.views.entry(folder, config, bench.metrics_type.model_validate_json((folder / METRICS).read_bytes()))
    except (OSError, ValueError, KeyError):  # unfinished, or written before a field: the records still compare
        return facts
    known = {"variant": entry.variant, **dict(entry.facets), "pack": entry.manifest[:12], "first": entry.max_samples}
    return {**facts, **{what: str(value) for what, value in known.items() if value not in (None, "")}}


def check_side(runs: list[Run], name: str) -> None:
    """The runs of one side are one model's cell on different seeds (the same model, task, variant, split, pack,
    first N and identity): anything else is one line naming it."""
    seeds = Counter(r.seed for r in runs)
    if len(runs) > 1 and (None in seeds or max(seeds.values()) > 1):
        raise UserError(f"side {name} has {len(runs)} runs but not one per seed ({_seed_text(seeds)}): pass one run "
                        "per seed of one model's cell.")
    known = [what for what in runs[0].facts if all(what in r.facts for r in runs)]  # a bare responses.jsonl says less
    for what in known:
        values = {r.facts[what] for r in runs}
        if len(values) > 1:
            raise UserError(f"side {name} mixes runs that differ in {what} ({', '.join(sorted(map(str, values)))}): "
                            "its runs must be the seeds of one cell, run the same way.")


def _seed_text(seeds: Counter) -> str:
    return ", ".join(f"seed {s}" + (f" x{c}" if c > 1 else "") for s, c in seeds.items())


def own_comparison(a: list[Run], b: list[Run]) -> Any:
    """Two runs whose items are their own (Benchmark.own_items: adaptive runs), one a side, of one task: no answer of
    one pairs with the other's, so they are compared by what each measured (Benchmark.compare_own); anything else is
    one line naming why."""
    run = next(r for r in a + b if r.own_items)
    if len(a) == len(b) == 1 and a[0].own_items and b[0].own_items and a[0].bench.name == b[0].bench.name \
            and a[0].facts.get("task") == b[0].facts.get("task") and a[0].config and b[0].config:
        for r in a + b:
            folder = r.path if r.path.is_dir() else r.path.parent
            if not (folder / METRICS).is_file():
                raise UserError(f"{folder} has not finished (no {METRICS}: it was stopped or is still running), so it "
                                "measured nothing yet: finish it with `acousticbench run ... --resume`, then compare.")
        sides = [(r.config, read_records(r.path / RESPONSES if r.path.is_dir() else r.path, r.bench.record_type))
                 for r in a + b]
        found = a[0].bench.compare_own(a[0].facts["task"], *sides)
        if found is not None:
            return found
    folders = "" if all(r.config for r in a + b if r.own_items) else (
        " (pass their run folders: config.json says how each placed its trials)")
    raise UserError(f"{run.path} is an {run.own_items} run: it made its items from its own answers, so no other run "
                    "asked them, whatever their ids, and its answers pair with none; compare it with one other such "
                    f"run of its task (what each measured){folders}, or check a rerun against a reference with "
                    "--compare-reference.")


def check_sides(a: list[Run], b: list[Run]) -> None:
    for what in SAME_ACROSS_SIDES:
        mine, theirs = a[0].facts.get(what), b[0].facts.get(what)
        if mine and theirs and mine != theirs:
            raise UserError(f"side A's {what} is {mine} and side B's {theirs}: compare runs of the same task on the "
                            "same pack (the same ids may be other questions).")


def answers_of(runs: list[Run]) -> Answers:
    """question id -> seed -> right, over the records each run's benchmark scores."""
    out: dict[str, dict[int, bool]] = {}
    for run in runs:
        for answer in run.answers:
            if answer.right is not None:
                out.setdefault(answer.id, {})[answer.seed] = answer.right
    return out


@dataclass(frozen=True)
class PairedComparison:
    items_shared: int  # item ids both sides have, scored or not
    answers: int  # answer pairs for agreement: by (id, seed) on shared seeds, by id for one run a side
    agree: int
    flips: Counter  # (label in A, label in B) -> count, for the answer pairs that differ
    pairing: Pairing
    result: PairedDifference | None
    label: str  # what was compared: the benchmark's label field (Benchmark.label_field)
    items: str  # what the items are called (Benchmark.item_noun)

    def lines(self, name_a: str, name_b: str, one_run_each: bool = True) -> list[str]:
        """What `acousticbench compare` prints: every count says what it counts."""
        pairing, result, items = self.pairing, self.result, self.items
        out = [f"{items.capitalize()} in both {'runs' if one_run_each else 'sides'}: {self.items_shared}"]
        if pairing.unpaired_a or pairing.unpaired_b:
            out.append(f"Scored {items} without a partner: A {pairing.unpaired_a}, B {pairing.unpaired_b}")
        if self.answers:
            per = "" if one_run_each else " answers paired by id and seed"
            share = _pct(self.agree / self.answers)
            out.append(f"Agreement on {self.label}: {self.agree}/{self.answers}{per} ({share})")
            out.append(f"Changed answers (A's {self.label} -> B's):")
            out += [f"  {_label(a)} -> {_label(b)}: {count}"
                    for (a, b), count in sorted(self.flips.items(), key=str)] or ["  none"]
        if result is None:
            return [*out, f"No scored {items[:-1]} in both: nothing to test.", f"A: {name_a}", f"B: {name_b}"]
        seeds = seed_note(pairing, items[:-1])
        n = result.questions
        out += [f"Accuracy on the {n} {items} scored in both: A {_pct(result.accuracy_a)}, B {_pct(result.accuracy_b)} "
                f"({seeds})",
                f"Difference A - B: {_points(result.difference)} points, 95% interval [{_points(result.interval.low)}, "
                f"{_points(result.interval.high)}] (Newcombe's score interval for paired proportions over {n} {items}: "
                f"n counts {items}; seeds are averaged within a {items[:-1]}, never counted as new pairs)"]
        test = "McNemar exact test" if max(na + nb for _, na, _, nb in pairing.counts) == 2 else \
            f"Sign-flip test ({'exact' if result.exact else '20,000 seeded random flips'})"
        better = ("only A right", "only B right") if test.startswith("McNemar") else ("A better on", "B better on")
        out.append(f"{test} over {n} {items}: {better[0]} {result.a_better}, {better[1]} {result.b_better}, "
                   f"p = {result.p_value:.4g}")
        out.append(f"Power: {power_line(n, seed_count(pairing), result.detectable, items)}, taking the spread of the "
                   f"per-{items[:-1]} differences seen here (sd {result.sd:.3f}; docs/results.md#power)")
        return [*out, f"A: {name_a}", f"B: {name_b}"]


def compare_sides(a: list[Run], b: list[Run]) -> PairedComparison:
    """Agreement on the benchmark's label, changed answers, and the paired test by question."""
    bench = a[0].bench
    label = bench.label_field
    pairs = _answer_pairs(a, b)
    pairing = pair_questions(answers_of(a), answers_of(b))
    if not pairs and not pairing.counts:
        raise UserError("the two sides share no item ids: are they runs of the same task?")
    shared = {r.id for run in a for r in run.answers} & {r.id for run in b for r in run.answers}
    return PairedComparison(
        items_shared=len(shared), answers=len(pairs), agree=sum(1 for x, y in pairs if x.label == y.label),
        flips=Counter((x.label, y.label) for x, y in pairs if x.label != y.label),
        pairing=pairing, result=paired_difference(pairing.counts), label=label, items=bench.item_noun)


def _answer_pairs(a: list[Run], b: list[Run]) -> list[tuple[Any, Any]]:
    """Answers paired one to one: by (id, seed) where the sides share seeds, by id where each side is one run."""
    theirs = {(r.id, r.seed): r for run in b for r in run.answers}
    shared = {k[1] for k in theirs} & {r.seed for run in a for r in run.answers}
    if shared:
        return [(r, theirs[(r.id, r.seed)]) for run in a for r in run.answers if (r.id, r.seed) in theirs]
    if len(a) == len(b) == 1:
        by_id = {r.id: r for r in b[0].answers}
        return [(r, by_id[r.id]) for r in a[0].answers if r.id in by_id]
    return []


def seed_count(pairing: Pairing) -> int:
    """How many seeds each item's answers were averaged over: the shared ones, else the larger side's own."""
    return len(pairing.seeds) or max(len(pairing.seeds_a), len(pairing.seeds_b), 1)


def seed_note(pairing: Pairing, item: str) -> str:
    """Which seeds each item's answers were averaged over, and which were left out because only one side ran them."""
    if not pairing.seeds:
        return (f"no seed in common: A's seeds {_seeds(pairing.seeds_a)}, B's {_seeds(pairing.seeds_b)}, each side's "
                "averaged")
    used = (f"each {item} averaged over the {len(pairing.seeds)} seeds both ran: {_seeds(pairing.seeds)}"
            if len(pairing.seeds) > 1 else f"one answer a side, seed {pairing.seeds[0]}")
    left = [f"{side}'s seeds {_seeds(extra)}" for side, mine in (("A", pairing.seeds_a), ("B", pairing.seeds_b))
            if (extra := tuple(s for s in mine if s not in pairing.seeds))]
    return used + (f"; left out, the other side lacks them: {', '.join(left)}" if left else "")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _points(x: float) -> str:
    return f"{100 * x:+.1f}"


def _seeds(seeds: tuple[int, ...]) -> str:
    return ", ".join(map(str, seeds))


def _label(label: str | None) -> str:
    return "null" if label is None else label
