"""The guide's toy benchmark (docs/examples/toy_benchmark, docs/extending.md): a package outside the harness, loaded
with ACOUSTICBENCH_PLUGINS, is listed, built with the packs, runs with the Oracle and Random, and shows in the
leaderboard and the report; and from Python, register_benchmark and evaluate run it. No harness file is edited."""
from __future__ import annotations

import subprocess
import sys

import pytest

from harness_cli import REPO, harness_env

EXAMPLES = REPO / "docs" / "examples"


def acousticbench(*args: str, cwd) -> subprocess.CompletedProcess:
    env = harness_env(PYTHONPATH=f"{REPO}:{EXAMPLES}", ACOUSTICBENCH_PLUGINS="toy_benchmark")
    out = subprocess.run([sys.executable, "-m", "acousticbench", *args], cwd=cwd, capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return out


@pytest.mark.slow  # six commands in new interpreters; the inner loop keeps the Python guide below
def test_the_toy_benchmark_is_listed_built_run_tabled_and_reported(tmp_path):
    assert "Toy (which of two tones lasts longer): longer" in acousticbench("tasks", cwd=tmp_path).stdout
    assert "Built the toy pack: 8 items." in acousticbench("pack", "build", "--benchmark", "Toy", cwd=tmp_path).stdout
    oracle = acousticbench("run", "--model", "Oracle", "--task", "longer", cwd=tmp_path)
    assert "Oracle on longer (seed 42): accuracy 1.000 over 8 pairs" in oracle.stdout
    random = acousticbench("run", "--model", "Random", "--task", "longer", "--seeds", "42,43", cwd=tmp_path)
    assert "Sweep: 2 runs, 2 finished, 0 failed" in random.stdout
    table = acousticbench("leaderboard", "results", cwd=tmp_path).stdout
    assert table.startswith("| Model | longer |")  # one benchmark present: its table alone, no heading
    assert "100.0" in next(line for line in table.splitlines() if line.startswith("| Oracle"))
    acousticbench("report", "results", "--out", "report.html", cwd=tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert "Toy" in page and "longer_0000" in page  # its section and its answers in the browser


def test_from_python_the_toy_registers_and_evaluates(tmp_path):
    code = f"""
import sys
from pathlib import Path
sys.path.insert(0, {str(EXAMPLES)!r})
import acousticbench, toy_benchmark
from toy_benchmark.benchmark import build
build(Path("archive"))
result = acousticbench.evaluate(model="Oracle", task="longer", seeds=[1, 2], progress=False)
print([(run.benchmark, run.cell, run.seed, run.accuracy, run.n) for run in result], result.status)
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env=harness_env(PYTHONPATH=str(REPO)))
    assert out.stdout.strip().splitlines()[-1] == "[('Toy', 'longer', 1, 1.0, 8), ('Toy', 'longer', 2, 1.0, 8)] 0", out.stderr
