"""A third benchmark added as README's "Adding a benchmark" says, one package plus one registration line in a copy of
the harness, is listed, runs with the Oracle and Random, and shows in the leaderboard and the report: the face and
every tool reach it through the seam alone."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness_cli import REPO, harness_env

TOY = Path(__file__).parent / "fixtures" / "toy_benchmark"
REGISTRATION = '"AudioICL": "acousticbench.benchmarks.audioicl"'


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    """A copy of the harness with the toy package added and registered (no other file touched)."""
    src = tmp_path_factory.mktemp("harness")
    shutil.copytree(REPO / "acousticbench", src / "acousticbench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "run.py", src / "run.py")
    shutil.copytree(TOY, src / "acousticbench" / "benchmarks" / "toy")
    seam = src / "acousticbench" / "benchmarks" / "__init__.py"
    text = seam.read_text()
    assert text.count(REGISTRATION) == 1
    seam.write_text(text.replace(REGISTRATION, REGISTRATION + ', "Toy": "acousticbench.benchmarks.toy"'))
    return src


def run(harness: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """run.py (or a script of scripts/ when the first argument ends in .py) of the copy."""
    command = [str(REPO / "scripts" / args[0]), *args[1:]] if args[0].endswith(".py") else [str(harness / "run.py"), *args]
    out = subprocess.run([sys.executable, *command], cwd=cwd, capture_output=True, text=True, timeout=300,
                         env=harness_env(PYTHONPATH=str(harness)))
    assert out.returncode == 0, out.stderr
    return out


def test_a_third_benchmark_is_listed_run_tabled_and_reported(harness, tmp_path):
    assert "Toy (which of two tones lasts longer): longer" in run(harness, "--list-tasks", cwd=tmp_path).stdout
    run(harness, "--build-toy", cwd=tmp_path)
    oracle = run(harness, "--model", "Oracle", "--task", "longer", cwd=tmp_path)
    assert "Oracle on longer (seed 42): accuracy 1.000 over 8 pairs" in oracle.stdout
    random = run(harness, "--model", "Random", "--task", "longer", "--seeds", "42,43", cwd=tmp_path)
    assert "Sweep: 2 runs, 2 finished, 0 failed" in random.stdout
    table = run(harness, "leaderboard.py", "results", cwd=tmp_path).stdout
    assert table.startswith("| Model | longer |")  # one benchmark present: its table alone, no heading
    oracle_row = next(line for line in table.splitlines() if line.startswith("| Oracle"))
    assert "100.0" in oracle_row
    run(harness, "--report", "results", "--out", "report.html", cwd=tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert "Toy" in page and "longer_0000" in page  # its section and its answers in the browser


def test_the_registered_benchmarks_of_the_copy_include_the_toy(harness, tmp_path):
    code = "from acousticbench.benchmarks import BENCHMARKS, get_benchmark; print(list(BENCHMARKS), get_benchmark('Toy').name)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env=harness_env(PYTHONPATH=str(harness)), timeout=60)
    assert out.stdout.split() == ["['AcousticBench',", "'AudioICL',", "'Toy']", "Toy"], out.stderr
