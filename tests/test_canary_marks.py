"""The canary's mark on the runs it invalidates, the same in both benchmarks: a plain sweep of an AcousticBench task and
an AudioICL task against a server that drops the second clip of each request exits 1, and the leaderboard (Markdown
and CSV) and the report mark both benchmarks' cells of that model with the finding; an honest server's same sweep
exits 0 and nothing is marked."""
from __future__ import annotations

import csv
import json
import io
import shutil
from pathlib import Path

import pytest

from acousticbench.run.canary_run import UNHEARD_CLIP
from audioicl_pack import reduced_pack
from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, script
from report_page import Page, browser  # noqa: F401
from servers import openai_server
from servers.ear import Mangle

SWEEP = ("--model", "Voxtral-Mini-3B", "--task", "rad,AudioCount", "--shots", "1,3", "--max-samples", "4",
         "--judge", "rules")
FINDING = "canary: the model did not hear both clips"


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory) -> dict[str, tuple[Path, object, int]]:
    """For an honest server and one that keeps only the first clip: (the folder of its results/, the sweep's run, the
    canary probes the server received)."""
    root = tmp_path_factory.mktemp("marks")
    archive = write_tiny_pack(root / "archive", "rad", 4)
    shutil.copytree(reduced_pack() / "audioicl", archive / "audioicl")
    found = {}
    for name, mangle in (("honest", Mangle()), ("drops", Mangle(keep_clips=1, infer=True))):
        folder = root / name
        folder.mkdir()
        with openai_server.serve(mangle=mangle) as server:
            run = run_cli(*SWEEP, "--archive", str(archive), cwd=folder,
                          env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))
            found[name] = folder, run, len(server.probes)
    return found


def leaderboard(folder: Path, *flags: str) -> str:
    out = script("leaderboard.py", "results", *flags, cwd=folder)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_sweep_whose_server_drops_the_second_clip_exits_1_naming_both_benchmarks_tasks(sweeps):
    """The sweep opens a session per benchmark's settings; the probes are asked once and said once for both."""
    _, run, probes = sweeps["drops"]
    assert run.returncode == 1, run.stderr
    lines = [line for line in run.stderr.splitlines() if "canary" in line]
    assert len(lines) == 1, run.stderr
    [line] = lines
    assert line.startswith("error: Voxtral-Mini-3B: canary:") and "does not hear both clips" in line
    assert line.endswith("--no-canary if you know it hears what is sent.") and "rad, AudioCount" in line
    assert "Exit status 1: 3 runs had audio that did not reach the model whole (the canary's probes)" in run.stdout
    _, honest, honest_probes = sweeps["honest"]
    assert honest.returncode == 0 and "canary" not in honest.stderr, honest.stderr
    assert probes == honest_probes == 8


def test_the_markdown_leaderboard_marks_every_invalidated_cell_of_both_benchmarks(sweeps):
    text = leaderboard(sweeps["drops"][0])
    rows = [line for line in text.splitlines() if line.startswith("| Voxtral-Mini-3B")]
    assert len(rows) == 3  # AcousticBench's row; AudioICL's k=1 and k=3 rows
    acoustic, *icl = rows
    assert acoustic.split(" | ")[2].endswith(" †")  # the rad cell
    assert all(row.split(" | ")[3].endswith(" †") for row in icl)  # each AudioICL accuracy
    assert text.count(f"† {UNHEARD_CLIP}") == 2  # under each benchmark's table
    assert "†" not in leaderboard(sweeps["honest"][0])


def test_the_csv_names_the_finding_on_each_invalidated_cell_and_on_no_honest_one(sweeps):
    rows = list(csv.DictReader(io.StringIO(leaderboard(sweeps["drops"][0], "--csv"))))
    assert {(r["benchmark"], r["task"], r["shots"]) for r in rows} == {
        ("AcousticBench", "rad", ""), ("AudioICL", "AudioCount", "1"), ("AudioICL", "AudioCount", "3")}
    assert {r["note"] for r in rows} == {UNHEARD_CLIP}
    honest = list(csv.DictReader(io.StringIO(leaderboard(sweeps["honest"][0], "--csv"))))
    assert len(honest) == 3 and {r["note"] for r in honest} == {""}


def report(folder: Path) -> Path:
    out = run_cli("--report", "results", "--out", "report.html", cwd=folder, env=harness_env())
    assert out.returncode == 0, out.stderr
    return folder / "report.html"


def test_the_report_marks_both_benchmarks_tables_as_a_reader_sees_them(sweeps, browser):  # noqa: F811
    page = Page(browser, report(sweeps["drops"][0]))
    [acoustic] = page.cells("#leaderboard")
    assert f"† {FINDING}" in acoustic[2]  # the rad cell
    icl = page.cells("#audioicl")
    assert [row[:2] for row in icl] == [["Voxtral-Mini-3B [first 4]", "AudioCount"]]
    assert all(f"† {FINDING}" in cell for cell in icl[0][2:4])  # k=1 and k=3
    points = page.page.eval_on_selector_all("svg.kshot circle title", "ts => ts.map(t => t.textContent)")
    assert len(points) == 2 and all(f"† {FINDING}" in point for point in points)  # the k-shot curve's tooltips
    assert page.errors == []
    honest = Page(browser, report(sweeps["honest"][0]))
    assert not any("†" in cell for table in ("#leaderboard", "#audioicl") for row in honest.cells(table)
                   for cell in row)


def test_rescoring_an_audioicl_run_keeps_its_mark(sweeps, tmp_path):
    """What the model heard does not change with how its replies are scored: rejudge.py keeps the mark."""
    shutil.copytree(sweeps["drops"][0] / "results", tmp_path / "results")
    [run] = (tmp_path / "results").glob("Voxtral-Mini-3B-AudioCount-k1-*")
    out = script("rejudge.py", str(run), "--scoring", "lenient", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = [line for line in leaderboard(tmp_path).splitlines() if "| AudioCount | 1 |" in line]
    assert len(rows) == 1 and rows[0].split(" | ")[3].endswith(" †")
    assert json.loads((run / "metrics.json").read_text())["listener"] == UNHEARD_CLIP
