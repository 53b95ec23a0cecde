"""Does the model listen: each control run (silence, noise, swapped or no audio) beside the real runs of its cell,
paired by question (seeds averaged inside a question), with the answers the control did not change; a model whose
answers stay the same without its audio is flagged."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from acousticbench.benchmarks import Entry, Section, get_benchmark
from acousticbench.core.significance import PairedDifference, pair_questions, paired_difference
from acousticbench.core.tables import html_table, md_table, pct

IGNORES = 0.9  # a model keeping this share of its answers or more when its audio is replaced is not listening


@dataclass(frozen=True)
class ControlRow:
    model: str
    task: str  # the cell: task and variant
    control: str
    seeds: int
    result: PairedDifference | None  # real (A) against control (B), by question
    unchanged: int  # answers (question and seed) with the same label in both runs
    compared: int  # answers (question and seed) labelled in both runs

    @property
    def flag(self) -> str | None:
        """Why the model looks deaf to its audio here, or None."""
        if self.compared and self.unchanged / self.compared >= IGNORES:
            return (f"ignores its audio: {self.unchanged} of {self.compared} answers unchanged under "
                    f"{self.control}")
        return None


def control_of(entry: Entry) -> str | None:
    return ((entry.config or {}).get("spec") or {}).get("control")


def _cell(entry: Entry) -> tuple:
    """What a control run shares with its real runs: everything but the control (its identity's last field)."""
    identity = tuple(kv for kv in entry.identity if kv[0] != "control")
    return entry.benchmark, entry.model, entry.task, entry.variant, entry.split, entry.manifest, entry.max_samples, identity


def _by_question(entries: list[Entry], records: Mapping[Path, Sequence]) -> tuple[dict, dict]:
    """question -> seed -> right, and (question, seed) -> the label, over the entries' records."""
    right: dict = {}
    labels: dict = {}
    for e in entries:
        bench = get_benchmark(e.benchmark)
        for r in records.get(e.run_dir, ()):
            data = r.model_dump()
            correct = bench.outcome(data)
            if correct is not None:
                right.setdefault(r.id, {})[r.seed] = bool(correct)
            labels[(r.id, r.seed)] = data.get(bench.label_field)
    return right, labels


def control_rows(entries: list[Entry], records: Mapping[Path, Sequence]) -> list[ControlRow]:
    """A row per (cell, control) that has real runs beside it."""
    real: dict[tuple, list[Entry]] = {}
    controls: dict[tuple, list[Entry]] = {}
    for e in entries:
        if e.run_dir is None:
            continue
        kind = control_of(e)
        (real.setdefault(_cell(e), []) if kind is None else controls.setdefault((_cell(e), kind), [])).append(e)
    rows = []
    for (cell, kind), group in controls.items():
        if cell not in real:
            continue
        right_a, labels_a = _by_question(real[cell], records)
        right_b, labels_b = _by_question(group, records)
        both = [k for k in labels_b if k in labels_a and labels_a[k] is not None and labels_b[k] is not None]
        label = get_benchmark(cell[0]).variant_label(cell[3])
        rows.append(ControlRow(cell[1], cell[2] + (f" {label}" if label else ""), kind, len({e.seed for e in group}),
                               paired_difference(pair_questions(right_a, right_b).counts),
                               sum(labels_a[k] == labels_b[k] for k in both), len(both)))
    return sorted(rows, key=lambda r: (r.model, r.task, r.control))


def _cells(row: ControlRow) -> list[str]:
    res = row.result
    if res is None:
        return [row.model, row.task, row.control, "-", "-", "-", "-", "-", row.flag or ""]
    diff = (f"{res.difference * 100:+.1f} [{res.interval.low * 100:+.1f}, {res.interval.high * 100:+.1f}]")
    unchanged = f"{row.unchanged}/{row.compared}" if row.compared else "-"
    return [row.model, row.task, row.control, pct(res.accuracy_a), pct(res.accuracy_b), diff, f"{res.p_value:.3g}",
            unchanged, row.flag or ""]


HEADER = ["Model", "Task", "Control", "Real %", "Control %", "Real - control (pp, 95% CI over questions)", "p",
          "Unchanged answers", "Flag"]
BLURB = ("Each control asks the same questions with the same seeds and prompts, its audio replaced; accuracy over the "
         "questions both answered, seeds averaged inside a question; p from the exact sign-flip test by question; "
         "unchanged answers count (question, seed) pairs with the same label in both. A model keeping "
         f"{IGNORES:.0%} or more of its answers is flagged: it is not listening.")


def records_of(entries: list[Entry]) -> dict[Path, list]:
    """Each run's records, read only where a control run is present (the leaderboard reads none otherwise)."""
    from acousticbench.run.results import RESPONSES, read_records

    if not any(control_of(e) for e in entries):
        return {}
    return {e.run_dir: read_records(e.run_dir / RESPONSES, get_benchmark(e.benchmark).record_type)
            for e in entries if e.run_dir is not None}


def markdown(entries: list[Entry], records: Mapping[Path, Sequence] | None = None) -> str:
    """The leaderboard's 'Does the model listen?' table; '' when there is no control run."""
    rows = control_rows(entries, records_of(entries) if records is None else records)
    if not rows:
        return ""
    return f"## Does the model listen?\n\n{md_table(HEADER, [_cells(r) for r in rows])}\n{BLURB}\n"


def sections(entries: list[Entry], records: Mapping[Path, Sequence]) -> list[Section]:
    """The report's section of the same table; none when there is no control run."""
    rows = control_rows(entries, records)
    if not rows:
        return []
    body = [[escape(c) for c in _cells(r)] for r in rows]
    return [Section("s-listen", "Does the model listen?", escape(BLURB),
                    html_table("listen", HEADER, body, "Real runs against their audio controls"))]
