"""Every run in its place: a silence, noise and swap control of Oracle and of Random, alone and beside their real runs,
over both benchmarks, and a variant (a permuted demo order): every tool names them as controls or variants, or leaves
them out with a line saying so, and no figure pools them with the real runs."""
from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from harness_cli import assert_one_line, python, run_cli, run_dirs, script
from servers.fixtures import records

SEEDS = "42,43"


def build_pack(root: Path) -> Path:
    """rad (two clips) and dir (one stereo clip), 60 scored questions each (enough that a model deaf to the swap reads as
    not following it: its paired interval must fit within 5 points), and the reduced AudioICL pack."""
    import audioicl_pack
    from acousticbench.benchmarks.acoustic.pack.build import build_tasks
    from acousticbench.benchmarks.acoustic.pack import questions_relpath, write_manifest, write_questions
    from acousticbench.benchmarks.acoustic.tasks import TASKS

    built = build_tasks(root, ["rad", "dir"], workers=1, numbers=set(range(1, 61)))
    sha = {questions_relpath(code): write_questions(root, code, questions) for code, questions in built.items()}
    write_manifest(root, "pack-of-run-kinds", "0", {code: {"title": TASKS[code].title, "clips": TASKS[code].clips,
                                                           "n_scored": 60, "n_diagnostic": 0} for code in built}, sha)
    shutil.copytree(audioicl_pack.reduced_pack() / "audioicl", root / "audioicl")
    return root


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """results/: real runs and their controls; real/: the real runs alone; alone/: the controls alone."""
    root = tmp_path_factory.mktemp("kinds")
    archive = str(build_pack(root / "archive"))
    acoustic = run_cli("--model", "Oracle,Random", "--task", "rad,dir", "--seeds", SEEDS, "--control",
                       "silence,noise,swap", "--archive", archive, "--judge", "rules", cwd=root)
    assert acoustic.returncode == 0, acoustic.stderr
    (root / "sweep.txt").write_text(acoustic.stdout)
    icl = run_cli("--model", "Oracle,Random", "--task", "AudioCount", "--shots", "1", "--seeds", SEEDS, "--control",
                  "silence,noise", "--max-samples", "6", "--archive", archive, cwd=root)
    assert icl.returncode == 0, icl.stderr
    for folder in run_dirs(root / "results"):
        control = json.loads((folder / "config.json").read_text())["spec"].get("control")
        shutil.copytree(folder, root / ("alone" if control else "real") / folder.name)
    return root


def board(root: Path, *args: str):
    out = script("leaderboard.py", *args, cwd=root)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    return out


def tables(text: str) -> str:
    """The accuracy tables of a leaderboard, without the line naming what they leave out and the controls' table."""
    return text.split("\nLeft out of")[0].split("## Does the model listen?")[0].rstrip()


def table_names(text: str) -> list[str]:
    return [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ") and "---" not in line]


def test_the_accuracy_tables_are_the_real_runs_alone_and_a_line_names_each_control(workspace):
    mixed, real = board(workspace, "results").stdout, board(workspace, "real").stdout
    assert tables(mixed) == tables(real)  # no figure of a control is pooled with, or stands for, the real run
    assert not any("control" in name for name in table_names(tables(mixed)))
    line = next(line for line in mixed.splitlines() if line.startswith("Left out of the accuracy tables"))
    for model in ("Oracle", "Random"):
        for cell, kinds in (("rad", "silence,noise,swap"), ("dir", "silence,noise,swap"),
                            ("AudioCount k=1", "silence,noise")):
            for kind in kinds.split(","):
                first = " [first 6]" if cell.startswith("AudioCount") else ""
                assert f"{model} [control: {kind}]{first} on {cell} (2 seeds)" in line


def test_controls_alone_are_never_listed_as_the_model(workspace):
    text = board(workspace, "alone").stdout
    assert not table_names(tables(text))  # no accuracy table at all: nothing here is the model's accuracy
    assert "Left out of the accuracy tables: 32 control runs" in text
    listen = text.split("## Does the model listen?")[1]
    assert "| Oracle [control: silence] | rad | silence |" in listen and "no real run beside it" in listen
    csv_out = board(workspace, "alone", "--csv")
    assert csv_out.stdout.strip().count("\n") == 0 and "32 control runs" in csv_out.stderr  # the header alone


def test_the_csv_is_the_real_runs_alone_and_says_so(workspace):
    mixed, real = board(workspace, "results", "--csv"), board(workspace, "real", "--csv")
    assert mixed.stdout == real.stdout and "note: Left out of the CSV: 32 control runs" in mixed.stderr


def test_a_model_comparisons_q_does_not_change_when_controls_are_added(workspace):
    mixed, real = board(workspace, "results", "--paired"), board(workspace, "real", "--paired")
    assert mixed.stdout.startswith(real.stdout)  # the same comparisons, the same q-values
    assert "Left out of the model-against-model grid and its q-values: 32 control runs" in mixed.stdout
    mixed_csv, real_csv = board(workspace, "results", "--paired", "--csv"), board(workspace, "real", "--paired", "--csv")
    assert mixed_csv.stdout == real_csv.stdout and "control" not in mixed_csv.stdout
    assert "32 control runs" in mixed_csv.stderr


def listen_rows(text: str) -> dict[tuple[str, str, str], list[str]]:
    table = text.split("## Does the model listen?")[1]
    return {(cells[0], cells[1], cells[2]): cells for line in table.splitlines()
            if line.startswith("| ") and "---" not in line
            for cells in [[c.strip() for c in line.strip("|").split("|")]] if cells[0] != "Model"}


def test_oracle_follows_the_swap_and_random_does_not(workspace):
    rows = listen_rows(board(workspace, "results").stdout)
    for task in ("rad", "dir"):
        assert rows[("Oracle", task, "swap")][8].startswith("follows the swap")
        assert rows[("Random", task, "swap")][8].startswith("does not follow the swap")
        assert float(rows[("Oracle", task, "swap")][4]) >= 90.0  # the share that followed, never an accuracy
        for kind in ("silence", "noise"):
            assert rows[("Oracle", task, kind)][8].startswith("listens")
            assert rows[("Random", task, kind)][8].startswith("not listening")
    assert rows[("Oracle", "AudioCount k=1", "silence")][8].startswith("listens")
    # six episodes cannot show that a model does not listen: the interval is too wide, and the verdict says so
    assert rows[("Random", "AudioCount k=1", "silence")][8].startswith("undecided with this many questions")


def test_a_swap_controls_records_name_the_clip_order_sent_and_score_against_its_key(workspace):
    folders = {f.name.split("-20")[0]: f for f in run_dirs(workspace / "results")}
    real = {r["id"]: r for r in records(folders["Oracle-rad-local-seed42"])}
    swapped = records(folders["Oracle-rad-control-swap-local-seed42"])
    assert all(r["audio"] == real[r["id"]]["audio"][::-1] and r["answer"] != real[r["id"]]["answer"] for r in swapped)
    stereo = records(folders["Oracle-dir-control-swap-local-seed42"])
    assert all(Path(r["audio"][0]).is_absolute() and r["correct"] for r in stereo)  # the clip sent, its key followed


def test_the_sweeps_closing_table_has_a_control_column(workspace):
    table = (workspace / "sweep.txt").read_text().split("Sweep: ")[1].splitlines()
    assert table[1].split()[:5] == ["model", "run", "control", "seed", "accuracy"]
    rows = [line.split() for line in table[2:]]
    assert {(r[0], r[1], r[2], r[3]) for r in rows} >= {("Oracle", "rad", "-", "42"), ("Oracle", "rad", "silence", "42"),
                                                         ("Random", "dir", "swap", "43")}
    assert all(r[4] == "followed" for r in rows if r[2] == "swap")  # a swap's figure is never an accuracy
    cells = [c for f in (workspace / "results").glob("sweep-*.json") for c in json.loads(f.read_text())["cells"]]
    assert {c["control"] for c in cells} == {None, "silence", "noise", "swap"}


def test_the_audioicl_summary_has_a_row_per_control(workspace):
    with (workspace / "results" / "audioicl_summary.csv").open() as fh:
        rows = {(r["model"], r["control"]): r for r in csv.DictReader(fh)}
    assert set(rows) == {(m, c) for m in ("Oracle", "Random") for c in ("", "silence", "noise")}
    assert rows[("Oracle", "")]["accuracy"] == "1.000000" and rows[("Oracle", "")]["n"] == "12"
    assert float(rows[("Oracle", "silence")]["accuracy"]) < 0.5 and rows[("Oracle", "silence")]["n"] == "12"


def test_eval_str_names_each_control_in_its_own_row(workspace, tmp_path):
    out = script("eval_str.py", "--in", str(workspace / "results"), "--out", str(tmp_path / "s.csv"))
    assert out.returncode == 0, out.stderr
    rows = {r["model"]: r for r in csv.DictReader((tmp_path / "s.csv").open())}
    assert set(rows) == {f"{m}{c}" for m in ("Oracle", "Random")
                         for c in ("", " [control: silence]", " [control: noise]")}
    assert rows["Oracle"]["accuracy"] == "1.000000" and rows["Oracle"]["n"] == "12"


def test_compare_names_a_control_side(workspace):
    folders = {f.name.split("-20")[0]: f for f in run_dirs(workspace / "results")}
    out = script("compare_runs.py", str(folders["Oracle-rad-local-seed42"]),
                 str(folders["Oracle-rad-control-silence-local-seed42"]), cwd=workspace)
    assert out.returncode == 0, out.stderr
    assert "[control: silence]" in out.stdout and "Side B is a control run of Oracle [control: silence]" in out.stdout


def test_a_control_is_refused_as_a_reference_and_never_compared_with_one(workspace, tmp_path):
    folders = {f.name.split("-20")[0]: f for f in run_dirs(workspace / "results")}
    refs = tmp_path / "refs"
    refused = python("-m", "acousticbench", "reference", "promote", str(folders["Oracle-rad-control-silence-local-seed42"]),
                     str(folders["Oracle-rad-local-seed42"]), "--references", str(refs), cwd=workspace)
    assert_one_line(refused, 2, "is a control run (silence", "promote the real run instead")
    assert not refs.exists() or not any(refs.rglob("*.jsonl"))  # nothing written
    promoted = python("-m", "acousticbench", "reference", "promote", str(folders["Oracle-rad-local-seed42"]),
                      "--references", str(refs), cwd=workspace)
    assert promoted.returncode == 0, promoted.stderr
    out = run_cli("--model", "Oracle", "--task", "rad", "--seed", "42", "--control", "silence,swap",
                  "--compare-reference", "--references", str(refs), "--archive", str(workspace / "archive"),
                  "--judge", "rules", "--results-dir", str(tmp_path / "results"), cwd=workspace)
    assert out.returncode == 0, out.stdout + out.stderr  # the controls were not compared: nothing is wrong
    assert "Reference comparison: 60/60 (100.0%) match" in out.stdout
    assert "Oracle [control: silence] on rad (seed 42) is not compared with the reference" in out.stdout
    assert "Oracle [control: swap] on rad (seed 42) is not compared with the reference" in out.stdout


def test_the_plans_power_leaves_the_controls_out(workspace):
    out = run_cli("--model", "Oracle", "--task", "rad", "--seeds", SEEDS, "--control", "silence",
                  "--archive", str(workspace / "archive"), "--dry-run", cwd=workspace)
    assert out.returncode == 0, out.stderr
    assert "Oracle [control: silence] on rad (seed 42)" in out.stdout
    power = out.stdout.split("Power of a comparison")[1]
    assert re.search(r"\n  rad: ", power) and "Left out of this power: 2 control runs" in power
    assert "Oracle [control: silence] on rad (2 seeds)" in power


def test_the_report_leaves_controls_out_of_its_accuracy_tables_and_measures_them(workspace):
    out = run_cli("--report", "results", "--out", "report.html", cwd=workspace)
    assert out.returncode == 0, out.stderr
    page = (workspace / "report.html").read_text()
    assert "Left out of the accuracy tables and the model-against-model view: 32 control runs" in page
    assert "follows the swap" in page and "not listening" in page
    listen = page.split('id="s-listen"')[1]
    before = page.split('id="s-listen"')[0]
    assert "[control:" not in re.sub(r"Left out of the accuracy tables[^<]*", "", before.split("<script")[0])
    assert "Oracle" in listen


def test_a_variant_is_named_as_such(workspace, tmp_path):
    out = run_cli("--model", "Oracle", "--task", "AudioCount", "--shots", "1", "--seed", "42", "--max-samples", "6",
                  "--demo-order", "permuted", "--archive", str(workspace / "archive"),
                  "--results-dir", str(tmp_path / "results"), cwd=workspace)
    assert out.returncode == 0, out.stderr
    text = board(tmp_path, str(tmp_path / "results")).stdout
    assert "| Oracle [demo order: permuted] [first 6] | AudioCount |" in text
    with (tmp_path / "results" / "audioicl_summary.csv").open() as fh:
        assert [r["variant"] for r in csv.DictReader(fh)] == ["demo order: permuted"]
