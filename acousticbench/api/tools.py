"""The tools over finished runs as typed functions: each returns what a script can use (a Leaderboard with its rows, a
Comparison with its counts and test), and `acousticbench leaderboard`, `compare`, `report`, `reference promote`,
`models` and `tasks` print from these same values."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acousticbench.core.errors import UserError


@dataclass(frozen=True)
class ModelGrid:
    """Model against model (`leaderboard --paired`): every two rows on every task both ran, paired by question."""

    tests: list  # model_grid's tests, one per pair of rows and task, with their q-values
    left_out: str | None  # the lines naming the runs left out of the grid (controls, adaptive runs), or None
    served_otherwise: Any = field(default=None, repr=False)

    def markdown(self) -> str:
        from acousticbench.tools import model_grid

        return model_grid.markdown(self.tests, self.served_otherwise) + (f"\n{self.left_out}\n" if self.left_out else "")

    def csv(self) -> str:
        from acousticbench.tools import model_grid

        return model_grid.to_csv(self.tests)


@dataclass(frozen=True)
class Leaderboard:
    """The finished runs (and references) a leaderboard counts: one entry per model, task (variant) and seed; the
    latest of runs made the same way."""

    entries: list  # benchmarks.Entry: model, task, seed, n, accuracy, error_rate, run_dir, metrics ...

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The CSV's rows by column (benchmark, model, task, ... mean accuracy, std over seeds): the numbers it
        prints; control runs are left out, as there."""
        from acousticbench.benchmarks import CSV_HEADER, get_benchmark
        from acousticbench.tools.leaderboard import by_benchmark, model_index, real_and_controls

        shown, _ = real_and_controls(self.entries)
        return [dict(zip(CSV_HEADER, row)) for name, group in by_benchmark(shown)
                for row in get_benchmark(name).views.leaderboard_csv(group, model_index)]

    def markdown(self) -> str:
        from acousticbench.tools.leaderboard import markdown

        return markdown(self.entries)

    def csv(self) -> str:
        from acousticbench.tools.leaderboard import to_csv

        return to_csv(self.entries)

    def paired(self) -> ModelGrid:
        from acousticbench.tools import model_grid

        models, left = model_grid.model_rows(self.entries)
        ordered = sorted(models, key=row_order)
        tests = model_grid.grid_tests(model_grid.entry_answers(ordered), model_grid.nouns_of(ordered))
        return ModelGrid(tests, left or None, model_grid.served_otherwise(ordered))


def leaderboard(*results_dirs: Path | str, references: bool | Path | str = False) -> Leaderboard:
    """The leaderboard of the finished runs under `results_dirs` (default ./results unless `references`), with the
    reference trajectories where `references` is True (./reference_trajectories) or a folder."""
    from acousticbench.tools.leaderboard import collect, reference_entries, with_references
    from acousticbench.tools.reference import default_root

    dirs = [Path(d) for d in results_dirs] or ([] if references else [Path("results")])
    refs = default_root() if references is True else Path(references) if references else None
    if refs is not None and not refs.is_dir():  # a folder given is read, or refused: never an empty part
        raise UserError(f"--references {refs} is not a folder: pass the reference trajectories' folder.")
    missing = [d for d in dirs if not d.is_dir()]
    if missing:
        raise UserError(f"{missing[0]} is not a folder: pass results folders (default ./results).")
    entries = collect(dirs)
    if refs is not None:
        entries = with_references(entries, reference_entries(refs))  # a run that is also a reference counts once
    if not entries:
        raise UserError("no finished runs found.")
    return Leaderboard(entries)


def row_order(e) -> tuple:
    """The leaderboard's order: benchmark, the model's place in the registry, then its other fields."""
    from acousticbench.benchmarks import BENCHMARKS
    from acousticbench.tools.leaderboard import model_index

    return list(BENCHMARKS).index(e.benchmark), model_index(e.model), e.model, str(e.identity), e.facets, \
        e.max_samples or 0, e.manifest, e.task, e.variant or 0, e.seed


@dataclass(frozen=True)
class Comparison:
    """Two runs, or every seed of two cells, on the same questions: agreement, changed answers, both accuracies and
    the paired test by question (`paired`: tools.paired.PairedComparison, its `result` the difference, interval and
    p); two runs whose items are their own (adaptive), by what each measured (`paired`: the benchmark's comparison,
    AcousticBench's adaptive/compare.py ThresholdComparison)."""

    a: list  # tools.paired.Run, one per seed of side A
    b: list
    paired: Any
    torn: list = field(default_factory=list, repr=False)  # lines a crash cut, compared without (readers.TornLine)

    def lines(self) -> list[str]:
        """What `acousticbench compare` prints on stdout."""
        serving = serving_lines([r.path for r in self.a], [r.path for r in self.b])
        return [*self.paired.lines(side_name(self.a), side_name(self.b), one_run_each=len(self.a) == len(self.b) == 1),
                "\n".join(serving), *control_lines(self.a, self.b)]  # no manifests: an empty line, as ever


def serving_lines(paths_a: list[Path], paths_b: list[Path]) -> list[str]:
    """How the two sides were served differently (each side's first run folder's manifest), or that they were not."""
    from acousticbench.core.manifest import differences, manifest_of
    from acousticbench.run.results import CONFIG, read_config

    folders = [p if p.is_dir() else p.parent for p in (paths_a[0], paths_b[0])]
    if not all((f / CONFIG).is_file() for f in folders):
        return []
    changed = differences(*(manifest_of(read_config(f)) for f in folders))
    if not changed:
        return ["Serving manifests: the same (server, engine, model revision, chat template, generation, judge)."]
    return [f"Serving manifests differ in {len(changed)} fact(s), beside any change in answers:",
            *(f"  {line}" for line in changed)]


def control_lines(a, b) -> list[str]:
    """A side that is a control run (its audio replaced) is named as such: the difference then measures whether the
    model listens, never a difference between two models (a swap's 'accuracy' is against what was sent)."""
    out = []
    for name, side in (("A", a), ("B", b)):
        kind = side[0].facts.get("control")
        if kind:
            model = side[0].facts.get("model", "the model")
            out.append(f"Side {name} is a control run of {model} [control: {kind}]: its audio was replaced, so its "
                       "figures are not the model's; against its real run the difference says whether the model "
                       "listens" + (" (swap: answers are scored against the key of the clips as sent, so a "
                                    "listening model keeps its accuracy and an unlistening one loses it)."
                                    if kind == "swap" else "."))
    return out


def side_name(runs) -> str:
    if len(runs) == 1:
        control = runs[0].facts.get("control")
        return str(runs[0].path) + (f" [control: {control}]" if control else "")
    seeds = ", ".join(str(r.seed) for r in runs)
    return f"{len(runs)} runs (seeds {seeds}): " + ", ".join(str(r.path) for r in runs)


def compare(runs_a: Sequence[Path | str], runs_b: Sequence[Path | str]) -> Comparison:
    """Side A's runs (one per seed of its cell) against side B's; refused in one line where they are not runs of the
    same benchmark and task, or a side repeats a seed."""
    from acousticbench.tools.paired import check_side, check_sides, compare_sides, load_run, own_comparison
    from acousticbench.tools.run_answers import RunAnswers

    torn: list = []
    with RunAnswers() as reader:  # through the results index of each run's results folder, where it can serve them
        a, b = [load_run(Path(p), torn, reader) for p in runs_a], [load_run(Path(p), torn, reader) for p in runs_b]
    if a[0].bench.name != b[0].bench.name:
        raise UserError(f"{runs_a[0]} is a {a[0].bench.name} run and {runs_b[0]} a {b[0].bench.name} run: "
                        "compare runs of the same benchmark and task.")
    if any(r.own_items for r in a + b):  # an adaptive run's answers pair with none: what each measured
        return Comparison(a, b, own_comparison(a, b), torn)
    check_side(a, "A")
    check_side(b, "B")
    check_sides(a, b)
    return Comparison(a, b, compare_sides(a, b), torn)


def report(*results_dirs: Path | str, out: Path | str = "report.html", embed_audio: bool = False,
           references: Path | str | None = None) -> Any:
    """One offline HTML report of the runs under `results_dirs` (default ./results): what it built (path, runs,
    records, bytes, seconds, missing clips)."""
    from acousticbench.tools.report import build_report

    return build_report([Path(d) for d in results_dirs] or [Path("results")], Path(out), embed_audio,
                        None if references is None else Path(references))


def promote_references(*run_dirs: Path | str, references: Path | str | None = None) -> list[Path]:
    """Finished runs made references (copied under `references`, default ./reference_trajectories): the files written."""
    from acousticbench.tools.promote import promote

    return promote([Path(d) for d in run_dirs], Path(references or "reference_trajectories"))


def models_table(archive: Path | str | None = None) -> str:
    """The model registry as `acousticbench models` prints it (with the LoRA finetunes of `archive`'s lora/)."""
    from acousticbench.run.catalog import models_table as table

    return table(None if archive is None else Path(archive))


def task_lines() -> list[str]:
    """Every benchmark's tasks, a line each, as `acousticbench tasks` prints them."""
    from acousticbench.benchmarks import faces

    return [line for face in faces().values() for line in face.task_lines()]
