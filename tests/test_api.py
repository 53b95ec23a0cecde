"""acousticbench.evaluate runs what the command line runs: the same run folder files and the same metrics for the same
seed from settings objects, with no argparse under it; the records and metrics handed back as objects, and the
command line's refusals raised as exceptions instead of exiting."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

import acousticbench
from acousticbench.core.errors import UserError
from audioicl_pack import reduced_pack
from harness_cli import python, run_cli


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


def test_evaluate_runs_from_a_worker_thread(tiny_pack, tmp_path):
    """A notebook or a service may call evaluate off the main thread, where no signal handler can be set."""
    import threading

    found = []
    worker = threading.Thread(target=lambda: found.append(acousticbench.evaluate(
        model="Always-A", task="rad", archive=tiny_pack, results_dir=tmp_path / "results")))
    worker.start()
    worker.join(timeout=120)
    assert found and found[0].status == 0 and found[0][0].accuracy == 0.5


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


NOTEBOOK = """
import sys
import acousticbench
from acousticbench.benchmarks.acoustic.spec import AcousticOptions
from acousticbench.benchmarks.audioicl.spec import ICLOptions

settings = acousticbench.RunSettings(model=["Oracle", "Random"], task=["rad", "AudioCount"], seeds=[3, 4],
                                     max_samples=5, archive={archive!r}, results_dir="api")
result = acousticbench.evaluate(settings, options=[AcousticOptions(judge="rules"),
                                                   ICLOptions(shot_counts=[1, 2], scoring="lenient")])
print("=", "argparse" in sys.modules, result.status, len(result))
for run in result:
    print("=", run.model, run.cell, run.seed, run.accuracy, [(r.id, r.status, r.correct) for r in run.records])
"""


@pytest.mark.slow  # 24 runs twice; the inner loop keeps the evaluate-against-the-CLI test above
def test_a_notebook_with_settings_objects_gets_the_records_of_the_same_command(tiny_pack, tmp_path):
    shutil.copytree(reduced_pack() / "audioicl", tiny_pack / "audioicl")  # both benchmarks in one archive
    cli = run_cli("--model", "Oracle,Random", "--task", "rad,AudioCount", "--seeds", "3,4", "--max-samples", "5",
                  "--judge", "rules", "--shots", "1,2", "--scoring", "lenient",
                  "--archive", str(tiny_pack), "--results-dir", "cli", cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    out = python("-c", NOTEBOOK.format(archive=str(tiny_pack)), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    first, *runs = [line[2:] for line in out.stdout.splitlines() if line.startswith("= ")]
    assert first == "False 0 12"  # no argparse anywhere under the API; 2 models x (rad + AudioCount k=1,2) x 2 seeds
    for line in runs:
        model, cell, seed, _, records = line.split(" ", 4)
        prefix = f"{model}-{cell.replace('/k', '-k')}-local-seed{seed}-"
        (cli_dir,) = (tmp_path / "cli").glob(prefix + "*")
        cli_records = [json.loads(row) for row in (cli_dir / "responses.jsonl").read_text().splitlines()]
        assert records == str([(r["id"], r["status"], r["correct"]) for r in cli_records])
        (api_dir,) = (tmp_path / "api").glob(prefix + "*")
        assert json.loads((api_dir / "config.json").read_text())["spec"] == json.loads(
            (cli_dir / "config.json").read_text())["spec"] | {"results_dir": "api"}


def test_evaluate_prints_nothing_and_load_runs_reads_back_the_same_runs(tiny_pack, tmp_path, capfd):
    """A notebook's cell shows what it returns, not the command line's lines, bars or notes (captured at the file
    descriptors, so tqdm, logging and a child process count too); the folders read back are the same runs."""
    result = acousticbench.evaluate(model=["Random", "Always-A"], task="rad", seeds=[7, 8], archive=tiny_pack,
                                    results_dir=tmp_path / "results", resume=True)  # resume: its note is silent too
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
    assert result.status == 0 and len(result) == 4 and all(run.accuracy is not None for run in result)
    loaded = acousticbench.load_runs(tmp_path / "results")
    assert sorted(loaded, key=lambda r: (r.model, r.seed)) == sorted(result.runs, key=lambda r: (r.model, r.seed))
    assert acousticbench.load_runs(result[0].run_dir) == [result[0]]
    assert capfd.readouterr() == ("", "")


def test_a_reporter_gets_the_lines_the_command_line_prints(tiny_pack, tmp_path):
    cli = run_cli("--model", "Always-A", "--task", "rad", "--seeds", "7,8", "--archive", str(tiny_pack),
                  "--results-dir", str(tmp_path / "cli"), cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr

    class Lines:
        def __init__(self):
            self.lines, self.warnings = [], []

        def line(self, text):
            self.lines.append(text)

        def warning(self, text):
            self.warnings.append(text)

        def progress(self):
            return False

    told = Lines()
    result = acousticbench.evaluate(model="Always-A", task="rad", seeds=[7, 8], archive=tiny_pack,
                                    results_dir=tmp_path / "api", reporter=told)
    assert result.status == 0
    def seen(text: str, folder) -> list[str]:  # runs finish in any order, each folder named by its start second
        return sorted(re.sub(r"-\d{8}-\d{6}", "-T", text.replace(str(folder), "X")).splitlines())

    assert told.lines and seen("\n".join(told.lines), tmp_path / "api") == seen(cli.stdout, tmp_path / "cli")


def test_each_run_holds_its_own_settings_and_the_sweep_its_own(tiny_pack, tmp_path):
    """A run's spec (config.json's `spec`) holds what that run is run with; what the command sweeps (its models,
    seeds, controls, the canary) stays with the sweep: RunSettings is the two, flat, and splits into them."""
    from acousticbench.core.settings import PerRunSettings, RunSettings, SweepSettings

    assert set(SweepSettings.model_fields).isdisjoint(PerRunSettings.model_fields)
    assert set(SweepSettings.model_fields) | set(PerRunSettings.model_fields) == set(RunSettings.model_fields)
    settings = RunSettings(model="Random,Always-A", task="rad", seeds=[7, 8], max_samples=3, canary=False,
                           archive=tiny_pack, results_dir=tmp_path / "results")
    assert settings.sweep.model_fields_set == {"model", "task", "seeds", "canary"} and not settings.sweep.canary
    result = acousticbench.evaluate(settings)
    assert result.status == 0 and len(result) == 4
    for run in result:
        assert run.spec.settings == settings.per_run and run.n == 3
        spec = json.loads((run.run_dir / "config.json").read_text())["spec"]
        # the run's own model and task name it; nothing else of the sweep's is there
        assert set(SweepSettings.model_fields) & set(spec) == {"model", "task"} and spec["model"] == run.model
        assert set(PerRunSettings.model_fields) <= set(spec)
