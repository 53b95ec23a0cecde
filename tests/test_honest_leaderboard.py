"""The leaderboard and the report never pool unlike runs and never count a seed as new questions: rules-judged and
LLM-judged runs of one model are two named rows, an interval over seeds is no narrower than one seed's, catch trials
are counted once, and the latest run of a cell is the one that finished last."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acousticbench.benchmarks.acoustic.views.leaderboard import table_rows as acoustic_rows
from acousticbench.tools.leaderboard import collect, model_index, reference_entries
from acousticbench.core.stats import wilson_interval
from report_runs import write_run
from test_run import run_cli

REPO = Path(__file__).resolve().parent.parent
JUDGES = {"rules": {"mode": "rules", "rules_version": "rules-5"},
          "llm": {"mode": "llm", "rules_version": "rules-5", "model": "gpt-4o-mini", "prompt_version": "judge-2"}}


def judged_run(results: Path, seed: int, judge: str, finished_at: str = "2026-01-01T00:00:00Z") -> Path:
    run_dir = write_run(results, "M", "rad", seed, midpoint=3.0)
    config = json.loads((run_dir / "config.json").read_text())
    config.update(judge=JUDGES[judge], finished_at=finished_at)
    (run_dir / "config.json").write_text(json.dumps(config))
    return run_dir.rename(run_dir.with_name(f"{run_dir.name}-{judge}"))


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("honest") / "results"
    for seed in (42, 43, 44):
        judged_run(root, seed, "rules")
    judged_run(root, 42, "llm")
    return root


def table_rows(entries):
    return acoustic_rows(entries, model_index)


def test_rules_and_llm_judged_runs_are_two_named_rows(results):
    _, rows = table_rows(collect([results]))
    names = ["M [judge llm, judge model gpt-4o-mini]", "M [judge rules, rules rules-5]"]
    assert sorted(row["model"] for row in rows) == names
    assert sorted(row["seeds"] for row in rows) == [(1, 1), (3, 3)]  # the fewest and the most over tasks
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "leaderboard.py"), str(results)], capture_output=True,
                         text=True, timeout=60)
    assert all(f"| {name} | all |" in out.stdout for name in names)


def test_the_report_names_both_rows_and_counts_catch_trials_once(results):
    out = run_cli("--report", str(results), "--out", str(results.parent / "report.html"), cwd=results.parent)
    assert out.returncode == 0, out.stderr
    html = (results.parent / "report.html").read_text()
    assert "M [judge rules, rules rules-5]" in html and "M [judge llm, judge model gpt-4o-mini]" in html
    assert "25 questions" in html and "75 questions" not in html  # three seeds of the same 25 catch trials


def test_always_a_over_three_seeds_is_no_narrower_than_one_seed():
    entries = [e for e in reference_entries(REPO / "reference_trajectories") if e.model == "Always-A"]
    _, [row] = table_rows(entries)
    one_seed = wilson_interval(200, 400)
    for task, interval in row["interval"].items():
        assert row["cells"][task][1] == 3  # seeds
        assert interval.high - interval.low >= one_seed.high - one_seed.low - 1e-9, task


def test_the_latest_run_is_the_one_that_finished_last(tmp_path, capsys):
    results = tmp_path / "results"
    early = judged_run(results, 42, "rules", finished_at="2026-03-01T00:00:00Z")
    late = judged_run(results, 42, "llm", finished_at="2026-02-01T00:00:00Z")
    config = json.loads((late / "config.json").read_text())
    (late / "config.json").write_text(json.dumps({**config, "judge": JUDGES["rules"]}))  # same identity now
    [entry] = collect([results])
    assert entry.run_dir == early  # sorted by name 'late' comes last, but it finished first
    assert f"note: {late} is an earlier run of the same model, task and seed" in capsys.readouterr().err  # named
