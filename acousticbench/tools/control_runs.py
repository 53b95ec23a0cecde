"""Does the model listen: each control run (silence, noise, swapped or no audio) beside the real runs of its cell,
paired by question (seeds averaged inside a question), with the verdict the difference supports
(core/listening_verdict.py); a swap is measured as the share of answers that followed the swapped clips, never as an
accuracy. A control without its real run is listed as such, never as the model."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from acousticbench.benchmarks import Entry, Section, get_benchmark
from acousticbench.core.audio_controls import SENT_KEY
from acousticbench.core.listening_verdict import NEGLIGIBLE, Listening, listening
from acousticbench.core.tables import html_table, md_table, pct



@dataclass(frozen=True)
class ControlRow:
    model: str  # the real runs' row name; the control is its own column
    task: str  # the cell: task and variant
    control: str
    seeds: int
    found: Listening | None  # None: no real run beside it
    why: str = ""  # why there is no verdict


def _cell(entry: Entry) -> tuple:
    """What a control run shares with its real runs: everything but the control."""
    identity = tuple(kv for kv in entry.identity if kv[0] != "control")
    return entry.benchmark, entry.model, entry.task, entry.variant, entry.facets, entry.manifest, entry.max_samples, identity


def _answers(entries: list[Entry], records: Mapping[Path, Sequence], key: Mapping | None = None) -> tuple[dict, dict]:
    """question -> seed -> right, and (question, seed) -> the label, over the entries' scored records; with `key`
    ((question, seed) -> a label), right means answering that key (a swap's: what its clips, as sent, ask)."""
    right: dict = {}
    labels: dict = {}
    for e in entries:
        bench = get_benchmark(e.benchmark)
        for r in records.get(e.run_dir, ()):
            data = r.model_dump()
            correct = bench.outcome(data)
            if correct is None:
                continue
            label = data.get(bench.label_field)
            if key is not None:
                if key.get((r.id, r.seed)) is None:
                    continue
                correct = label is not None and label == key[(r.id, r.seed)]
            right.setdefault(r.id, {})[r.seed] = bool(correct)
            labels[(r.id, r.seed)] = label
    return right, labels


def _sent_keys(entries: list[Entry], records: Mapping[Path, Sequence]) -> dict:
    """(question, seed) -> the key of what a swap control sent (its records' truth)."""
    return {(r.id, r.seed): get_benchmark(e.benchmark).views.answer_facts(r).truth
            for e in entries for r in records.get(e.run_dir, ())}


def _samples(entries: list[Entry]) -> bool:
    """Whether the model may sample (a temperature above 0, or the provider's default): its answers can change
    with the seed alone."""
    applied = [((e.config or {}).get("backend") or {}).get("temperature", 0.0) for e in entries]
    return any(not isinstance(t, (int, float)) or t > 0 for t in applied if t is not None)


def _row(real: list[Entry], group: list[Entry], kind: str, records: Mapping[Path, Sequence]) -> Listening | str:
    if kind == "swap" and any(((e.config or {}).get("control") or {}).get("scored_against") != SENT_KEY for e in group):
        return "written before a swap was scored against what was sent: run the control again"
    key = _sent_keys(group, records) if kind == "swap" else None
    right_a, labels_a = _answers(real, records, key)
    right_b, labels_b = _answers(group, records, key)
    return listening(right_a, right_b, labels_a, labels_b, _samples(real), swap=kind == "swap")


def control_rows(entries: list[Entry], records: Mapping[Path, Sequence]) -> list[ControlRow]:
    """A row per (cell, control): against its real runs where they are present, else saying there are none."""
    from acousticbench.core.identity import row_labels

    real: dict[tuple, list[Entry]] = {}
    controls: dict[tuple, list[Entry]] = {}
    for e in entries:
        if e.run_dir is None and e.control is None:
            continue
        (real.setdefault(_cell(e), []) if e.control is None else controls.setdefault((_cell(e), e.control), [])).append(e)
    names = {bench: row_labels([e for e in entries if e.control is None and e.benchmark == bench])
             for bench in {e.benchmark for e in entries}}  # a row is named as its benchmark's table names it
    rows = []
    for (cell, kind), group in controls.items():
        label = get_benchmark(cell[0]).views.variant_label(cell[3])
        task, seeds = cell[2] + (f" {label}" if label else ""), len({e.seed for e in group})
        if cell not in real:
            rows.append(ControlRow(group[0].run.label(first=False) if group[0].run else cell[1], task, kind, seeds,
                                   None, "no real run beside it: run the model on this task and seed to measure it"))
            continue
        found = _row(real[cell], group, kind, records)
        name = names[cell[0]].get((cell[1], real[cell][0].identity), cell[1])
        rows.append(ControlRow(name, task, kind, seeds, found if isinstance(found, Listening) else None,
                               found if isinstance(found, str) else ""))
    return sorted(rows, key=lambda r: (r.model, r.task, r.control))


def _interval(res) -> str:
    return f"{res.difference * 100:+.1f} [{res.interval.low * 100:+.1f}, {res.interval.high * 100:+.1f}]"


def _cells(row: ControlRow) -> list[str]:
    found = row.found
    if found is None or found.result is None:
        return [row.model, row.task, row.control, "-", "-", "-", "-", "-", row.why or (found.verdict if found else "")]
    res, changed = found.result, found.changed
    first, second = (res.accuracy_b, res.accuracy_a) if found.swap else (res.accuracy_a, res.accuracy_b)
    diff = _interval(res)
    moved = "-" if changed is None else f"{pct(changed.accuracy_a)} vs {pct(changed.accuracy_b)}"
    return [row.model, row.task, row.control, pct(first), pct(second), diff, f"{res.p_value:.3g}", moved,
            found.verdict]


HEADER = ["Model", "Task", "Control", "Real %", "Control %", "Real - control (pp, 95% CI over questions)", "p",
          "Answers changed: by the control vs by another seed %", "Verdict"]
BLURB = ("Each control asks the same questions with the same seeds and prompts, its audio replaced; the control runs "
         "are never pooled with the real runs. Silence, noise, no audio: accuracy over the questions both answered, "
         "seeds averaged inside a question. Swap: 'Real %' is the share of the real run's answers that name the key "
         "of the swapped clips, 'Control %' the share of the control's answers that did (followed the swap): a "
         "listening model follows, one that ignores its audio keeps its answer; never an accuracy. p from the exact "
         "sign-flip test by question. Answers changed: per question, the share the control changed against the share "
         "another seed of the real audio changed (a model that samples changes answers without any change of audio). "
         "Verdict: listens (or follows the swap) where the interval is above 0; not listening only where the interval "
         f"lies within {100 * NEGLIGIBLE:.0f} points of 0 and the control changes no more answers than another seed "
         "does; else undecided at this n.")


class _RecordsWhenAsked(Mapping):
    """Run folder -> its records, read from responses.jsonl each time asked and never held: a lab's folder of
    thousands of runs as record objects would take gigabytes."""

    def __init__(self, entries: list[Entry]):
        self._benchmarks = {e.run_dir: e.benchmark for e in entries if e.run_dir is not None}

    def __getitem__(self, run_dir: Path) -> list:
        from acousticbench.run.results import RESPONSES, read_records

        return read_records(run_dir / RESPONSES, get_benchmark(self._benchmarks[run_dir]).record_type)

    def __iter__(self):
        return iter(self._benchmarks)

    def __len__(self) -> int:
        return len(self._benchmarks)


def records_of(entries: list[Entry]) -> Mapping[Path, list]:
    """Each run's records, read when asked and only where a control run is present (the leaderboard reads none
    otherwise)."""
    return _RecordsWhenAsked(entries) if any(e.control for e in entries) else {}


def markdown(entries: list[Entry], records: Mapping[Path, Sequence] | None = None) -> str:
    """The leaderboard's 'Does the model listen?' table; '' when there is no control run."""
    rows = control_rows(entries, records_of(entries) if records is None else records)
    if not rows:
        return ""
    return f"## Does the model listen?\n\n{md_table(HEADER, [_cells(r) for r in rows])}\n{BLURB}\n"


def sections(entries: list[Entry], records: Mapping[Path, Sequence], left: Sequence[Entry] = ()) -> list[Section]:
    """The report's section of the same table, saying which control runs the accuracy tables leave out; none when
    there is no control run."""
    from acousticbench.core.run_identity import left_out_line

    rows = control_rows(entries, records)
    if not rows:
        return []
    body = [[escape(c) for c in _cells(r)] for r in rows]
    note = left_out_line([e.run for e in left if e.run], "the accuracy tables and the model-against-model view",
                         "This table measures them.")
    return [Section("s-listen", "Does the model listen?", escape(f"{note} {BLURB}".strip()),
                    html_table("listen", HEADER, body, "Real runs against their audio controls"))]
