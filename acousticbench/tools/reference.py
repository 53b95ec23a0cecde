"""Reference trajectories: compare a run to the published run of the same seed (tools/promote.py makes them)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from acousticbench.core.errors import UserError
from acousticbench.core.readers import read_json, read_jsonl
from acousticbench.run.results import read_config, write_json
from acousticbench.core.environment import safe_name

if TYPE_CHECKING:
    from acousticbench.benchmarks import Benchmark

SUMMARY = "summary.json"
COMPARISON = "comparison.json"


def default_root() -> Path:
    """./reference_trajectories when run from a checkout, else the one shipped beside the package."""
    here = Path("reference_trajectories")
    return here if here.is_dir() else Path(__file__).resolve().parents[2] / "reference_trajectories"


@dataclass(frozen=True)
class Comparison:
    reference_file: Path
    n: int
    matches: int
    mismatches: list[dict[str, Any]]
    accuracy_run: float | None
    accuracy_reference: float | None
    note: str | None  # e.g. the run and the reference cover different splits

    @property
    def match_rate(self) -> float:
        return self.matches / self.n if self.n else 0.0

    def line(self) -> str:
        return f"Reference comparison: {self.matches}/{self.n} ({100 * self.match_rate:.1f}%) match ({self.reference_file})"

    def to_json(self) -> dict[str, Any]:
        diff = None if self.accuracy_run is None or self.accuracy_reference is None else self.accuracy_run - self.accuracy_reference
        return {"reference_file": str(self.reference_file), "n": self.n, "matches": self.matches,
                "match_rate": self.match_rate, "mismatches": self.mismatches, "accuracy_run": self.accuracy_run,
                "accuracy_reference": self.accuracy_reference, "accuracy_difference": diff, "note": self.note}


class _SummaryRun(BaseModel):
    seed: int
    file: str = Field(pattern=r"^[^/\\]+\.jsonl$")  # a file beside summary.json, never a path elsewhere


class _Summary(BaseModel):
    """What every reference summary holds; its benchmark's facets (a split) are checked where its views read them."""

    runs: list[_SummaryRun]
    archive_manifest_sha256: str


class _ReferenceLine(BaseModel):
    id: str


_FIX = ("restore it (git checkout reference_trajectories/) or promote the runs again with `acousticbench reference "
        "promote`")


def load_summary(folder: Path) -> dict[str, Any]:
    return read_json(folder / SUMMARY, "the reference summary", _FIX, _Summary)


def read_reference(path: Path) -> dict[str, dict]:
    """A reference run's records by id; a damaged or cut line is one line naming it (known before the run starts)."""
    return {r["id"]: r for r in read_jsonl(path, "the reference run", _FIX, _ReferenceLine)}


def reference_file(root: Path, model: str, task: str, seed: int, made_as: str | None = None) -> Path:
    """The run file for (model, cell, seed), found through summary.json; the error says what exists. The cell is the
    run spec's `cell`: its task, or its task and variant. `made_as` (Benchmark.made_as): a reference whose runs were
    made otherwise (an adaptive procedure's other tracks or trials) placed other trials under the same ids."""
    folder = root / safe_name(model) / task
    if not folder.is_dir():
        models = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        tasks = sorted(p.name for p in (root / safe_name(model)).iterdir()) if (root / safe_name(model)).is_dir() else []
        if tasks:
            raise UserError(f"no reference for {model} on {task}: {root / safe_name(model)} has tasks {', '.join(tasks)}.")
        raise UserError(f"no reference trajectories for {model} under {root}: references exist for "
                        f"{', '.join(models) or 'no model'}.")
    summary = load_summary(folder)
    if summary.get("made_as") != made_as:
        raise UserError(f"the reference {folder} was made as {summary.get('made_as') or 'runs of the pack'}, and this "
                        f"run would be made as {made_as or 'a run of the pack'}: run it as the reference was, or "
                        "promote a reference made this way; nothing was asked.")
    runs = summary["runs"]
    for run in runs:
        if run["seed"] == seed:
            read_reference(folder / run["file"])  # a damaged reference is found now, not after the run was paid for
            return folder / run["file"]
    raise UserError(f"no reference for {model} on {task} with seed {seed}: references exist for seeds "
                    f"{', '.join(str(r['seed']) for r in runs)}.")


def accuracy(lines: list[dict[str, Any]], bench: Benchmark) -> float | None:
    """Correct over scored, as the benchmark says of each record (Benchmark.outcome)."""
    scored = [correct for correct in map(bench.outcome, lines) if correct is not None]
    return sum(scored) / len(scored) if scored else None


def other_items(bench: Benchmark, run_spec: Mapping[str, Any], summary: Mapping[str, Any]) -> str | None:
    """How the run chose other items than the reference ('split eval, the reference all'), where it chose some (an
    option off its default); None where it chose the same, or all."""
    from acousticbench.benchmarks import faces

    fields = faces()[bench.name].options.model_fields
    for option in bench.subset_options:
        default = fields[option].default
        run, ref = run_spec.get(option, default), summary.get(option, default)
        if run != default and ref != run:
            return f"{option} {run}, the reference {ref}"
    return None


def compare_to_reference(records: list, path: Path, run_spec: Mapping[str, Any] | None = None,
                         label: str | None = None) -> Comparison:
    """Match item by item on `label` (default: the benchmark's label field, Benchmark.label_field), over the items
    the run covered; the records name their benchmark. `run_spec` (config.json's spec): where the run chose other
    items than the reference (Benchmark.subset_options), the comparison says so."""
    from acousticbench.benchmarks import get_benchmark

    reference = read_reference(path)
    if not records:
        return Comparison(path, 0, 0, [], None, None, None)
    bench = get_benchmark(records[0].benchmark)
    label = label or bench.label_field
    known = [r for r in records if r.id in reference]
    shared = [r for r in known if bench.same_item(r, reference[r.id])]  # an id may name another trial there
    note = None
    if len(shared) < len(records):
        notes = [f"{len(records) - len(known)} {bench.item_noun} of the run are not in the reference"] \
            if len(known) < len(records) else []
        if len(shared) < len(known):
            notes.append(f"{len(known) - len(shared)} of its ids name other {bench.item_noun} in the reference (the "
                         "run made them from its own answers, which went otherwise)")
        note = f"{'; '.join(notes)}; compared the {len(shared)} shared"
    elif other := other_items(bench, run_spec or {}, load_summary(path.parent)):
        note = f"the run covers {other}: compared the shared {bench.item_noun}"
    mismatches = [{"id": r.id, "reference": reference[r.id].get(label), "run": getattr(r, label)}
                  for r in shared if getattr(r, label) != reference[r.id].get(label)]
    return Comparison(path, len(shared), len(shared) - len(mismatches), mismatches,
                      accuracy([r.model_dump(mode="json") for r in shared], bench),
                      accuracy([reference[r.id] for r in shared], bench), note)


def write_comparison(run_dir: Path, comparison: Comparison, serving: list[str] | None = None) -> None:
    write_json(run_dir / COMPARISON, {**comparison.to_json(), **({"serving_differences": serving} if serving else {})})


def serving_differences(run_dir: Path, reference_file: Path) -> list[str]:
    """Each fact in which the run's serving manifest differs from the reference's (summary.json keeps it from the
    run promoted last); [] where the reference predates manifests."""
    from acousticbench.core.manifest import differences, manifest_of

    theirs = load_summary(reference_file.parent).get("manifest")
    return differences(theirs, manifest_of(read_config(run_dir))) if theirs else []
