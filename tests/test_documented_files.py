"""What docs/results.md, docs/audioicl.md, docs/reproducing.md and docs/running.md say each output file holds, read
from the files a real sweep writes: every field a page names is in the file, and every field in the file is named on
the page (what each n counts is checked where the page says it)."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil

import pytest

import audioicl_pack
from acousticbench.benchmarks.acoustic.pack.synthetic import write_noise_pack
from harness_cli import REPO, python, run_cli, run_dirs

DOCS = REPO / "docs"
SCORED, SEEDS = 20, ("42", "43")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Oracle and Random on rad (20 scored questions and the three diagnostic probes) and AudioCount k=1 (20
    episodes), seeds 42 and 43, in one sweep; then the leaderboard as CSV, plain and paired."""
    root = tmp_path_factory.mktemp("documented")
    shutil.copytree(audioicl_pack.reduced_pack(), root / "archive", copy_function=os.link)
    write_noise_pack(root / "archive", "rad", SCORED)
    out = run_cli("--model", "Oracle,Random", "--task", "rad,AudioCount", "--shots", "1", "--seeds", ",".join(SEEDS),
                  "--archive", str(root / "archive"), cwd=root)
    assert out.returncode == 0, out.stderr
    tables = {}
    for name, extra in (("leaderboard", ()), ("paired", ("--paired",))):
        out = python("-m", "acousticbench", "leaderboard", "results", "--csv", *extra, cwd=root)
        assert out.returncode == 0, out.stderr
        tables[name] = list(csv.reader(io.StringIO(out.stdout)))
    return root / "results", tables


def section(page: str, start: str, end: str) -> str:
    text = (DOCS / page).read_text(encoding="utf-8")
    return text[text.index(start):text.index(end, text.index(start))]


def named(text: str) -> set[str]:
    """Every field a passage names in backticks, lists and dotted paths split into their names."""
    return {word for quoted in re.findall(r"`([^`]+)`", text) for word in re.split(r"[\s,.{}]+", quoted) if word}


def listed(text: str, lead: str) -> list[str]:
    """The comma list in backticks after `lead` ('records share'), braces' contents left out."""
    prose = re.sub(r"<!--.*?-->", "", text, flags=re.S)  # the field-list markers the docs test reads
    found = re.search(re.escape(lead) + r"\s+`([^`]+)`", re.sub(r"\s+", " ", prose))
    assert found, f"the page no longer says {lead!r}"
    return [word for word in re.split(r",\s*", re.sub(r"\{[^}]*\}", "", found.group(1))) if word.strip()]


def run_files(results, prefix: str, name: str):
    folder = next(f for f in run_dirs(results) if f.name.startswith(prefix))
    path = folder / name
    return [json.loads(line) for line in path.read_text().splitlines()] if name.endswith(".jsonl") else \
        json.loads(path.read_text())


def test_responses_jsonl_holds_the_fields_results_md_lists(results):
    text = section("results.md", "- `responses.jsonl`", "- `config.json`")
    common = listed(text, "records share")
    for prefix, own in (("Oracle-rad-", "AcousticBench adds"), ("Oracle-AudioCount-", "AudioICL adds")):
        documented = {*common, *(w.strip() for w in listed(text, own))}
        for record in run_files(results[0], prefix, "responses.jsonl"):
            assert set(record) == documented, (prefix, set(record) ^ documented)


def test_config_json_holds_the_fields_results_md_names(results):
    documented = named(section("results.md", "- `config.json`", "- `metrics.json`"))
    for prefix in ("Oracle-rad-", "Oracle-AudioCount-"):
        assert set(run_files(results[0], prefix, "config.json")) <= documented, prefix


def test_metrics_json_holds_the_fields_results_md_names_and_each_n_counts_what_it_says(results):
    text = section("results.md", "- `metrics.json`", "The leaderboard and the report read")
    documented = named(text)
    acoustic = run_files(results[0], "Oracle-rad-", "metrics.json")
    for part in (acoustic, acoustic["scored"], acoustic["diagnostics"], acoustic["by_level"]["1"],
                 run_files(results[0], "Oracle-AudioCount-", "metrics.json")):
        assert set(part) - {"by_level", "by_split"} <= documented, set(part) - documented
    for path in re.findall(r"^\| `((?:scored|diagnostics|psychometric)\.\w+)`", text, re.M):  # each row's own field
        head, field = path.split(".")
        assert field in acoustic[head], path
    assert acoustic["scored"]["n"] == SCORED and acoustic["by_level"]["1"]["ci95_method"] == "clopper-pearson"
    assert sum(acoustic["statuses"].values()) == SCORED + 3  # every record, the catch, identical and swap probes too
    assert (acoustic["diagnostics"]["n_catch"], acoustic["diagnostics"]["n_swap_pairs"]) == (1, 1)


def test_the_audioicl_summary_and_the_leaderboard_csvs_have_the_documented_columns_and_counts(results):
    folder, tables = results
    summary = list(csv.reader((folder / "audioicl_summary.csv").open()))
    columns = re.search(r"with the columns `([^`]+)`", (DOCS / "audioicl.md").read_text()).group(1).split(",")
    assert summary[0] == columns
    assert {row[columns.index("n")] for row in summary[1:]} == {str(20 * len(SEEDS))}  # episodes x seeds

    page = re.sub(r"\s+", " ", (DOCS / "reproducing.md").read_text())
    plain = re.search(r"`--csv` writes one line per cell with the columns `([^`]+)`", page).group(1).split(",")
    paired = re.search(r"`--paired --csv` writes one line per comparison with the columns `([^`]+)`",
                       page).group(1).split(",")
    assert tables["leaderboard"][0] == plain and tables["paired"][0] == paired
    for row in tables["leaderboard"][1:]:
        assert row[plain.index("n_seeds")] == "2" and row[plain.index("n_items")] == str(SCORED * 2)  # answers
    for row in tables["paired"][1:]:
        assert row[paired.index("n")] == str(SCORED) and row[paired.index("seeds")] == ",".join(SEEDS)


def test_the_sweep_file_holds_the_fields_running_md_names(results):
    documented = named(section("running.md", "## The sweep file", "## Progress"))
    [sweep] = [json.loads(p.read_text()) for p in results[0].glob("sweep-*.json")]
    assert set(sweep) - {"cells"} <= documented | {"command", "started_at", "finished_at"}
    for cell in sweep["cells"]:
        assert set(cell) <= documented, set(cell) - documented
