"""acousticbench.run.sweep runs what run.py runs: the same run folder files and the same metrics for the same seed, the
records and metrics handed back as objects, and run.py's refusals raised as exceptions instead of exiting."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import acousticbench
from acousticbench.core.errors import UserError
from harness_cli import run_cli


def test_evaluate_gives_the_metrics_and_files_of_the_same_cli_run(tiny_pack, tmp_path):
    cli = run_cli("--model", "Random,Always-A", "--task", "rad", "--seed", "7", "--archive", str(tiny_pack),
                  "--results-dir", str(tmp_path / "cli"), cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    result = acousticbench.evaluate(model=["Random", "Always-A"], task="rad", seeds=7, archive=tiny_pack,
                                    results_dir=tmp_path / "api")
    assert result.status == 0 and [(r.model, r.cell, r.seed) for r in result] == [("Random", "rad", 7),
                                                                                 ("Always-A", "rad", 7)]
    for run in result:
        (cli_dir,) = (tmp_path / "cli").glob(f"{run.model}-rad-local-seed7-*")
        assert sorted(p.name for p in run.run_dir.iterdir()) == sorted(p.name for p in cli_dir.iterdir())
        cli_metrics = json.loads((cli_dir / "metrics.json").read_text())
        assert run.metrics.model_dump(mode="json") == cli_metrics == json.loads((run.run_dir / "metrics.json").read_text())
        assert run.accuracy == cli_metrics["scored"]["accuracy"] and run.n == cli_metrics["scored"]["n"] == 8
        cli_records = [json.loads(line) for line in (cli_dir / "responses.jsonl").read_text().splitlines()]
        assert [(r.id, r.chosen, r.status) for r in run.records] == [(r["id"], r["chosen"], r["status"])
                                                                    for r in cli_records]


def test_a_setting_run_py_refuses_is_an_exception_not_an_exit(tiny_pack, tmp_path):
    with pytest.raises(UserError, match="unknown model 'Orcale'. Did you mean Oracle"):
        acousticbench.evaluate(model="Orcale", task="rad", archive=tiny_pack, results_dir=tmp_path / "results")
    with pytest.raises(UserError, match="--concurrency: 'lots' is not a whole number"):
        acousticbench.evaluate(model="Oracle", task="rad", archive=tiny_pack, results_dir=tmp_path / "results",
                               concurrency="lots")
    with pytest.raises(TypeError, match="unknown setting.*max_sample\\b.*max_samples"):
        acousticbench.evaluate(model="Oracle", task="rad", archive=tiny_pack, results_dir=tmp_path / "results",
                               max_sample=3)
    assert not (tmp_path / "results").exists()  # nothing was run


def test_importing_the_package_loads_none_of_the_engine():
    code = "import sys, acousticbench; print(sorted(m for m in sys.modules if m.startswith('acousticbench')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['acousticbench', 'acousticbench.core', 'acousticbench.core.version']"
