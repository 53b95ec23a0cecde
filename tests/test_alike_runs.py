"""Nothing unlike is pooled: AudioICL strict and lenient runs (also one made lenient by rejudge.py), runs on two pack
versions, on the first N questions, judged by the rules or an LLM, are never one cell in the leaderboard's Markdown
and CSV or the report; and each row's Avg is its own, so a partial run in the folder changes no other row's."""
from __future__ import annotations

import csv
import io
import json
import re
import zlib

import pytest

from acousticbench.benchmarks.acoustic.views.leaderboard import markdown, table_rows
from acousticbench.benchmarks.acoustic.tasks import TASKS
from acousticbench.tools.leaderboard import collect, model_index
from audioicl_pack import reduced_pack
from harness_cli import run_cli, run_dirs, script
from report_runs import write_run

RULES = {"mode": "rules", "rules_version": "rules-6"}


def leaderboard(root, *flags: str) -> str:
    out = script("leaderboard.py", "results", *flags, cwd=root)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.slow  # four commands on AudioICL runs: about 11 s
def test_strict_and_lenient_audioicl_runs_are_never_one_cell(tmp_path):
    from acousticbench.tools.leaderboard import to_csv
    from acousticbench.tools.report import build_report

    args = ("--task", "AudioCount", "--shots", "1", "--max-samples", "4", "--archive", str(reduced_pack()))
    for models, scoring in (("Oracle,Random", "strict"), ("Oracle", "lenient")):
        out = run_cli("--model", models, *args, "--scoring", scoring, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
    [random_run] = [d for d in run_dirs(tmp_path / "results") if d.name.startswith("Random")]
    assert script("rejudge.py", str(random_run), "--scoring", "lenient", cwd=tmp_path).returncode == 0
    assert json.loads((random_run / "config.json").read_text())["spec"]["scoring"] == "lenient"
    assert json.loads((random_run / "metrics.json").read_text())["scoring"] == "lenient"  # what its numbers are now

    text = leaderboard(tmp_path)
    assert "| Oracle [scoring strict] [first 4] | AudioCount | 1 |" in text
    assert "| Oracle [scoring: lenient] [first 4] | AudioCount | 1 |" in text
    rows = list(csv.DictReader(io.StringIO(to_csv(collect([tmp_path / "results"])))))
    assert sorted((r["model"], r["n_seeds"]) for r in rows if r["model"].startswith("Oracle")) == [
        ("Oracle [scoring strict] [first 4]", "1"), ("Oracle [scoring: lenient] [first 4]", "1")]
    build_report([tmp_path / "results"], tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text()
    assert "Oracle [scoring strict] [first 4]" in html and "Oracle [scoring: lenient] [first 4]" in html


def full_row(results, model: str, seed: int = 42, **config) -> None:
    """A run of `model` on every task of the benchmark, with config.json changed as given (judge, archive, spec)."""
    for task in TASKS:
        run_dir = write_run(results, model, task, seed, midpoint=3.5)
        data = json.loads((run_dir / "config.json").read_text())
        for section, values in config.items():
            data[section] = {**data.get(section, {}), **values}
        (run_dir / "config.json").write_text(json.dumps(data))
        run_dir.rename(run_dir.with_name(f"{run_dir.name}-{zlib.crc32(json.dumps(config).encode())}"))


def averages(results) -> dict[tuple, float]:
    """Each row's Avg, by what the row is (model, split, first N, pack and identity), whatever its name."""
    _, rows = table_rows(collect([results]), model_index)
    return {(row["key"], row["identity"]): row["average"] for row in rows}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Two full rows, then runs unlike them added one kind at a time: the averages after each step."""
    results = tmp_path_factory.mktemp("alike") / "results"
    full_row(results, "M1", judge=RULES)
    full_row(results, "M2", judge=RULES)
    steps = [averages(results)]
    write_run(results, "P", "rad", 42, midpoint=1.0)  # a partial run: one task of eight
    steps.append(averages(results))
    first_20 = write_run(results, "M1", "rad", 43, midpoint=1.0)  # M1 again, on the first 20 questions only
    config = json.loads((first_20 / "config.json").read_text())
    config.update(spec={**config["spec"], "max_samples": 20}, judge=RULES)
    (first_20 / "config.json").write_text(json.dumps(config))
    first_20.rename(first_20.with_name(first_20.name + "-first20"))
    steps.append(averages(results))
    full_row(results, "M1", seed=43, archive={"manifest_sha256": "e" * 64}, judge=RULES)
    full_row(results, "M2", seed=43, judge={"mode": "llm", "model": "gpt-4o-mini", "rules_version": "rules-6"})
    steps.append(averages(results))
    return results, steps


def test_a_partial_run_changes_no_other_rows_average(mixed):
    _, steps = mixed
    first = steps[0]
    assert len(first) == 2 and all(value is not None for value in first.values())
    for later in steps[1:]:  # a partial run, a first-N run, another pack, another judge: none moves or blanks it
        assert {row: later[row] for row in first} == pytest.approx(first)


@pytest.mark.slow  # runs eight kinds of unlike runs and a browser; the partial-run test stays in the inner loop
def test_unlike_runs_are_rows_of_their_own_in_markdown_and_the_report(mixed):
    results, _ = mixed
    _, rows = table_rows(collect([results]), model_index)
    names = {row["model"]: row for row in rows}
    assert {n for n in names if n.startswith("M1")} == {f"M1 [archive {'f' * 8}]", f"M1 [first 20] [archive {'f' * 8}]",
                                                       f"M1 [archive {'e' * 8}]"}
    assert {n for n in names if n.startswith("M2")} == {"M2 [judge rules, rules rules-6]",
                                                       "M2 [judge llm, judge model gpt-4o-mini]"}
    assert all(len({e.seed for e in row["entries"] if e.task == "rad"}) == 1 for row in rows)  # never pooled
    assert names["P"]["partial"] and not names["M2 [judge rules, rules rules-6]"]["partial"]
    text = markdown(collect([results]), model_index)
    assert f"1 of 8 (rad): M1 [first 20] [archive {'f' * 8}], P]" in text and "(partial)" in text
    out = run_cli("--report", str(results), "--out", str(results.parent / "report.html"), cwd=results.parent)
    assert out.returncode == 0, out.stderr
    html = (results.parent / "report.html").read_text()
    table = re.search(r'<table id="leaderboard">.*?</table>', html, re.S).group(0)
    assert table.count("<tr>") == len(rows) + 1 and "M2 [judge llm, judge model gpt-4o-mini]" in table
