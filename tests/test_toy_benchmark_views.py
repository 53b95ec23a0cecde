"""A third benchmark that implements only the core protocol (no leaderboard or report code of its own) still shows in
the leaderboard and the report: one package plus one registration line, on a copy of the harness, run for real."""
from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from report_runs import write_run
from servers.fixtures import REPO, harness_env

TOY = '''"""Toy: say the letter the prompt names; a benchmark with nothing of its own to show."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from acousticbench.benchmarks import BenchmarkBase, Prepared
from acousticbench.records import Prompt, RecordBase


@dataclass(frozen=True)
class Item:
    id: str
    truth: str


class ToyRecord(RecordBase):
    benchmark: Literal["Toy"] = "Toy"
    prompt: str
    prediction: str | None
    correct: bool


class ToyMetrics(BaseModel):
    model: str
    task: str
    seed: int
    n: int
    accuracy: float | None
    tokens: dict[str, int] = {}
    price_usd: float | None = None
    price_basis: str | None = None


@dataclass(frozen=True)
class ToySpec:
    benchmark: ClassVar[str] = "Toy"
    model: str
    task: str = "letters"
    seed: int = 42
    max_samples: int | None = None
    concurrency: int | None = None
    archive: Path = Path("archive")
    results_dir: Path = Path("results")
    resume: bool = False
    max_error_rate: float = 0.1

    cell = property(lambda self: self.task)

    def backend_overrides(self) -> dict[str, Any]:
        return {}

    def run_prefix(self, backend_name: str) -> str:
        return f"{self.model}-{self.task}-{backend_name}-seed{self.seed}"

    def label(self) -> str:
        return f"{self.model} on {self.task} (seed {self.seed})"

    def settings(self) -> dict[str, Any]:
        return {"max_samples": self.max_samples}

    def to_json(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, **asdict(self), "archive": str(self.archive),
                "results_dir": str(self.results_dir)}


class ToyBenchmark(BenchmarkBase):
    name = "Toy"
    record_type = ToyRecord
    metrics_type = ToyMetrics
    final_statuses = frozenset({"answered"})
    label_field = "prediction"
    uses_judge = False

    def prepare(self, spec: ToySpec, cache: dict) -> Prepared:
        items = [Item(f"toy_{i:04d}", "AB"[i % 2]) for i in range(1, 13)][: spec.max_samples]
        return Prepared([(it, Prompt(question_id=it.id, task=spec.task, text=f"Say {it.truth}.", audio=[],
                                     seed=spec.seed)) for it in items], (), {"n_items": len(items)})

    def record_maker(self, spec: ToySpec, prepared: Prepared, judge):
        async def to_record(item: Item, prompt: Prompt, outcome) -> ToyRecord:
            said = outcome.reply.text.strip() if outcome.reply and outcome.reply.text else None
            return ToyRecord(id=item.id, model=spec.model, task=spec.task, seed=spec.seed, prompt=prompt.text,
                             status="answered" if outcome.reply else "error", response=said, error=outcome.error,
                             prediction=said, correct=said == item.truth)

        return to_record

    def metrics(self, spec: ToySpec, records: list[ToyRecord]) -> ToyMetrics:
        n = len(records)
        return ToyMetrics(model=spec.model, task=spec.task, seed=spec.seed, n=n,
                          accuracy=sum(r.correct for r in records) / n if n else None)

    def summary_line(self, result) -> str:
        return f"{result.spec.label()}: accuracy {result.metrics.accuracy}"

    def headline(self, metrics: ToyMetrics) -> tuple[float | None, int]:
        return metrics.accuracy, metrics.n

    def scored(self, record: ToyRecord) -> bool:
        return True

    def spec_from_config(self, config: dict, **overrides: Any) -> ToySpec:
        data = {k: v for k, v in config["spec"].items() if k != "benchmark"}
        data["archive"], data["results_dir"] = Path(data["archive"]), Path(data["results_dir"])
        return ToySpec(**{**data, **overrides})

    def reference_keys(self) -> tuple[str, ...]:
        return ("id", "benchmark", "task", "model", "seed", "response", "prediction", "correct", "status")


BENCHMARK = ToyBenchmark()
'''

SWEEP = '''import sys
from acousticbench.benchmarks.toy import ToySpec
from acousticbench.evaluate import run_sweep

results = run_sweep([ToySpec(model=m, seed=s) for m in ("Random", "Always-A") for s in (42, 43)], progress=False)
sys.exit(0 if all(r.run_dir and not r.error for r in results) else 1)
'''


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A copy of the harness with the toy registered, and results/ of real toy runs beside one AcousticBench run."""
    root = tmp_path_factory.mktemp("toy")
    harness = root / "harness"
    shutil.copytree(REPO / "acousticbench", harness / "acousticbench", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("run.py", "scripts/leaderboard.py"):
        (harness / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, harness / name)
    (harness / "acousticbench/benchmarks/toy").mkdir()
    (harness / "acousticbench/benchmarks/toy/__init__.py").write_text(TOY)
    seam = harness / "acousticbench/benchmarks/__init__.py"
    text, registered = re.subn(r"^(BENCHMARKS = \{.*?)[\s,]*\}", r'\1, "Toy": "acousticbench.benchmarks.toy"}',
                               seam.read_text(), count=1, flags=re.M | re.S)  # the guide's one registration line
    assert registered == 1
    seam.write_text(text)
    (root / "work").mkdir()
    out = python(root, "-c", SWEEP)
    assert out.returncode == 0, out.stderr
    write_run(root / "work" / "results", "Random", "rad", 42, midpoint=2.0)
    return root


def python(root: Path, *args: str) -> subprocess.CompletedProcess:
    """Python run on the copy of the harness (its folder first on the path), in root/work."""
    return subprocess.run([sys.executable, *args], cwd=root / "work", capture_output=True, text=True, timeout=300,
                          env=harness_env(PYTHONPATH=str(root / "harness")))


def accuracies(root: Path, model: str) -> list[float]:
    """Each toy run's accuracy, counted from its responses.jsonl."""
    out = []
    for path in sorted((root / "work" / "results").glob(f"{model}-letters-*/responses.jsonl")):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        out.append(sum(r["correct"] for r in records) / len(records))
    return out


def cell(values: list[float]) -> str:
    return f"{100 * statistics.fmean(values):.1f} ± {100 * statistics.stdev(values):.1f}"


def test_the_toy_runs_were_real_runs_of_twelve_items(workspace):
    assert len(accuracies(workspace, "Random")) == 2 and accuracies(workspace, "Always-A") == [0.5, 0.5]


def test_the_leaderboard_gives_the_toy_its_own_section(workspace):
    out = python(workspace, str(workspace / "harness/scripts/leaderboard.py"), "results")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert out.stdout.index("## AcousticBench") < out.stdout.index("## Toy")  # in registration order
    toy = out.stdout.split("## Toy")[1]
    assert "| Model | letters |" in toy
    assert f"| Random | {cell(accuracies(workspace, 'Random'))} |" in toy and "| Always-A | 50.0 ± 0.0 |" in toy
    assert toy.index("| Random |") < toy.index("| Always-A |")  # registry order, as in the other tables
    csv = python(workspace, str(workspace / "harness/scripts/leaderboard.py"), "results", "--csv")
    assert "Toy,Always-A,all,letters,,0.500000,0.000000,2,24" in csv.stdout.splitlines()


def test_the_report_has_a_toy_section_and_browses_its_answers(workspace):
    out = python(workspace, str(workspace / "harness/run.py"), "--report", "results", "--out", "report.html")
    assert out.returncode == 0, out.stderr
    html = (workspace / "work" / "report.html").read_text()
    assert '<section id="s-toy"><h2>Toy leaderboard</h2>' in html and '<a href="#s-toy">Toy leaderboard</a>' in html
    assert '<section id="s-leaderboard">' in html  # AcousticBench's sections stay as they were
    section = html.split('<section id="s-toy">')[1].split("</section>")[0]
    assert f"{cell(accuracies(workspace, 'Random'))}</span>" in section
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', html).group(1))
    toy_runs = {i for i, run in enumerate(data["runs"]) if run["bench"] == "Toy"}
    assert len(toy_runs) == 4
    rows = [i for i, run in enumerate(data["records"]["run"]) if run in toy_runs]
    assert len(rows) == 48  # 12 items x 2 models x 2 seeds
    prompts = {data["texts"][data["questions"][data["records"]["q"][i]][1]] for i in rows}
    assert prompts == {"Say A.", "Say B."}
