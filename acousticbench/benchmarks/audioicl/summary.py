"""AudioICL summaries: accuracy per (model, shots, task) from run folders or public result files, as CSV and a plot."""
from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from acousticbench.benchmarks.audioicl import TASKS
from acousticbench.benchmarks.audioicl.scoring import Scoring, score
from acousticbench.core.errors import UserError

COLUMNS = ("model", "shots", "task", "accuracy", "n")  # eval_str.py: the public scorer's accuracy, as the paper's
# the sweep's audioicl_summary.csv: the harness's accuracy (metrics.json's: a refusal is never right), the public
# scorer's beside it, and a row per setting, so commands accumulate; n counts answers (episodes x seeds); a control
# run (its audio replaced) and a variant (a demo order) are rows of their own, named in their columns, never pooled
RUN_COLUMNS = ("model", "shots", "task", "accuracy", "accuracy_public", "n", "prompt_style", "scoring", "control",
               "variant")
COUNTS = "audioicl summary counts"  # its name among a run's derived values (core/derived_values.py)
RUN_FILES = ("config.json", "metrics.json", "responses.jsonl")  # what the counts are of: any change counts again
PUBLIC_FILE = re.compile(r"^(?P<model>.+?)_results(?:_meta)?_k(?P<k>\d+)\.jsonl$")  # the public inference output


@dataclass(frozen=True)
class Answer:
    """One scored line, whatever file it came from."""

    model: str
    shots: int
    task: str
    response: str | None
    gt: str
    prompt_style: str | None = None  # of the run it came from (None for public result files)
    scoring: str | None = None
    correct: bool | None = None  # the harness's verdict (the record's `correct`; None for public result files)
    control: str | None = None  # the audio control its run heard in place of the clips (None: the real audio)
    variant: str | None = None  # how its run asked otherwise than the plain run ('demo order: permuted'), else None

    @property
    def name(self) -> str:
        """The model, with its control and variant named as such ('Oracle [control: silence]')."""
        return self.model + (f" [control: {self.control}]" if self.control else "") + \
            (f" [{self.variant}]" if self.variant else "")


@dataclass(frozen=True)
class Tally:
    """One run's answers of one model, shots and task, counted: what summarise adds up of them."""

    model: str
    shots: int
    task: str
    prompt_style: str | None
    scoring: str | None
    control: str | None
    variant: str | None
    n: int  # answers
    correct: int  # the harness's right ones (each record's `correct`)
    public: tuple[tuple[str, int], ...]  # the public scorer's right ones under each scoring, read from the responses

    name = Answer.name


def run_folder_answers(root: Path, prompt_style: str | None = None, torn: list | None = None) -> Iterator[Tally]:
    """The answers of AudioICL run folders under `root`, counted per run: the latest folder per (model, task, k, seed,
    backend, prompt style, scoring, control, variant), each with the prompt style and scoring it was run with, and its
    control and variant (core/run_identity.py); a line a crash cut goes to `torn`. A run's counts come from the
    results index where its files are as when they were counted (core/derived_values.py), else from its file, one run
    at a time: a lab's thousands of runs never sit in memory together."""
    from acousticbench.benchmarks import run_identity_of
    from acousticbench.core.derived_values import DerivedValues
    from acousticbench.core.readers import read_json

    latest: dict[str, Path] = {}
    fix = "restore it, or move that run folder out of the results folder"
    for config in sorted(Path(root).rglob("config.json")):
        whole = read_json(config, "the run config", fix)
        spec = whole.get("spec", {})
        if spec.get("benchmark") != "AudioICL" or not (config.parent / "responses.jsonl").is_file():
            continue
        if prompt_style and spec.get("prompt_style") != prompt_style:
            continue
        prefix = re.sub(r"-\d{8}-\d{6}(-\d+)?$", "", config.parent.name) + f"/{spec.get('prompt_style')}/{spec.get('scoring')}" \
            + "/" + "/".join(run_identity_of(whole).tags())  # a demo order is not in the folder's name
        if prefix not in latest or config.parent.name > latest[prefix].name:
            latest[prefix] = config.parent
    kept: dict[Path, DerivedValues] = {}  # the results index's derived values, one per results folder
    try:
        for folder in latest.values():
            config = read_json(folder / "config.json", "the run config", fix)
            spec, run = config["spec"], run_identity_of(config)
            variant = "; ".join(f"{k}: {v}" for k, v in run.variants if k not in ("prompt", "scoring")) or None
            values = kept.get(folder.parent) or kept.setdefault(folder.parent, DerivedValues(folder.parent))
            here: list | None = None if torn is None else []  # a torn line: said, and its run's counts never kept
            counts = values.value(folder, COUNTS, RUN_FILES, lambda: run_counts(folder, fix, here), lambda _: not here)
            if here:
                torn.extend(here)
            for model, shots, task, n, correct, strict, lenient in counts:
                yield Tally(model, shots, task, spec.get("prompt_style"), spec.get("scoring"), run.control, variant,
                            n, correct, (("strict", strict), ("lenient", lenient)))
    finally:
        for values in kept.values():
            values.close()


def run_counts(folder: Path, fix: str, torn: list | None) -> list[list]:
    """A run's answers counted by (model, shots, task) as its records name them: [model, shots, task, answers, the
    harness's right ones, the public scorer's strict and lenient right ones], read from its responses.jsonl; a line a
    crash cut goes to `torn`, or is refused as damaged where there is none (read_jsonl)."""
    from acousticbench.core.readers import read_jsonl

    counts: dict[tuple, list[int]] = {}
    for r in read_jsonl(folder / "responses.jsonl", "the run file", fix, torn=torn):
        try:
            key, response, gt = (r["model"], int(r["shots"]), r["task"]), r.get("response"), str(r["gt"])
        except (KeyError, TypeError, ValueError):
            raise UserError(f"{folder / 'responses.jsonl'}: record {r.get('id')!r} is not an AudioICL record; "
                            f"{fix}.") from None
        count = counts.setdefault(key, [0, 0, 0, 0])
        count[0] += 1
        count[1] += bool(r.get("correct"))
        count[2] += score(key[2], response, gt, "strict")[1]
        count[3] += score(key[2], response, gt, "lenient")[1]
    return [[*key, *count] for key, count in counts.items()]


def public_answers(root: Path) -> Iterator[Answer]:
    """Answers from files named {model}_results_k{k}.jsonl with lines {id, task, response, gt}, a line at a time."""
    for path in sorted(Path(root).rglob("*.jsonl")):
        match = PUBLIC_FILE.match(path.name)
        if match is None:
            continue
        with path.open(encoding="utf-8", newline="") as lines:  # newline="": the lines str.splitlines() would split
            for lineno, line in enumerate(_split_lines(lines), 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                    answer = Answer(match["model"], int(match["k"]), str(r["task"]), r.get("response"),
                                    str(r.get("gt")))
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise UserError(f"{path}:{lineno}: not a result line with task, response and gt; "
                                    "fix or remove it.") from None
                yield answer


def _split_lines(lines: Iterable[str]) -> Iterator[str]:
    """The lines of a file read a line at a time, as str.splitlines() splits the whole text (and numbers them)."""
    for line in lines:
        yield from line.splitlines()


def summarise(answers: Iterable[Answer | Tally], scoring: Scoring = "strict", only_model: str | None = None,
              by_run: bool = False) -> list[dict]:
    """Rows sorted by (model, shots, task): COLUMNS, each episode scored by the public scorer from its response and
    gold label; by_run (run folders): RUN_COLUMNS, the accuracy the harness's (each record's own verdict, as in
    metrics.json) and the public scorer's as accuracy_public, a row per prompt style and scoring. A control run and a
    variant are rows of their own: by_run in their columns, else named in the model's ('Oracle [control: silence]')."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    for a in answers:
        if only_model and a.model != only_model:
            continue
        mode = (a.scoring if by_run else None) or scoring  # by_run: scored as its run was, a row per setting
        style = a.prompt_style if by_run else None
        run = (a.control or "", a.variant or "") if by_run else ("", "")
        cell = counts[(a.model if by_run else a.name, a.shots, a.task, style, mode if by_run else None, *run)]
        if isinstance(a, Tally):  # a run's answers, counted once (under both scorings)
            public, right, n = dict(a.public).get(mode, dict(a.public)["strict"]), a.correct, a.n  # as score() reads
        else:
            public = score(a.task, a.response, a.gt, mode)[1]
            right, n = bool(a.correct), 1
        cell[0] += right if by_run else public
        cell[1] += public
        cell[2] += n
    rows = []
    for (m, k, t, style, mode, control, variant), (c, public, n) in sorted(
            counts.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        row = {"model": m, "shots": k, "task": t, "accuracy": f"{c / n:.6f}"}
        rows.append({**row, "accuracy_public": f"{public / n:.6f}", "n": n, "prompt_style": style, "scoring": mode,
                     "control": control, "variant": variant} if by_run else {**row, "n": n})
    return rows


def write_csv(rows: list[dict], path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=RUN_COLUMNS if any("accuracy_public" in r for r in rows) else COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def _line(row: dict) -> str:
    return row["model"] + (f" [control: {row['control']}]" if row.get("control") else "") + \
        (f" [{row['variant']}]" if row.get("variant") else "")


def plot(rows: list[dict], path: Path) -> None:
    """Accuracy against shots, one panel per task, one line per model (PNG)."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install -e '.[plot]'.") from None
    tasks = [t for t in TASKS if any(r["task"] == t for r in rows)] + sorted({r["task"] for r in rows} - set(TASKS))
    cols = min(3, max(1, len(tasks)))
    fig, axes = plt.subplots((len(tasks) + cols - 1) // cols, cols, figsize=(4 * cols, 3 * ((len(tasks) + cols - 1) // cols)),
                             squeeze=False, sharey=True)
    for ax, task in zip(axes.flat, tasks):
        for line in sorted({_line(r) for r in rows}):  # a control or a variant: a line of its own, named so
            points = sorted((int(r["shots"]), float(r["accuracy"])) for r in rows if r["task"] == task and _line(r) == line)
            if points:
                ax.plot(*zip(*points), marker="o", label=line)
        ax.set_title(task)
        ax.set_xticks(sorted({int(r["shots"]) for r in rows}))
        ax.set_xlabel("shots (k)")
        ax.set_ylim(0, 1.02)
    for ax in list(axes.flat)[len(tasks):]:
        ax.set_visible(False)
    axes.flat[0].set_ylabel("accuracy")
    axes.flat[0].legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
