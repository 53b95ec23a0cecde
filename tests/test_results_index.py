"""The results index (in the harness's cache, one per results folder): the leaderboard, its CSV, the paired view and
the report read the same from it as from the run folders themselves, over both benchmarks, controls and variants; a run whose
files change is read again, a run being written is never stored, a damaged index is built again, and two commands
reading one folder at once agree."""
from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness_cli import harness_env, run_cli, run_dirs
from test_run_kinds import build_pack

from acousticbench.run.results import RunLock
from acousticbench.tools import model_grid
from acousticbench.tools.leaderboard import collect, markdown, run_entry, to_csv
from acousticbench.tools.results_index import index_path

SEEDS = "42,43"


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """Real runs of both benchmarks with their controls, and AudioICL at two numbers of shots (its variant)."""
    root = tmp_path_factory.mktemp("indexed")
    archive = str(build_pack(root / "archive"))
    acoustic = run_cli("--model", "Oracle,Random", "--task", "rad,dir", "--seeds", SEEDS, "--control", "silence,swap",
                       "--archive", archive, "--judge", "rules", cwd=root)
    assert acoustic.returncode == 0, acoustic.stderr
    icl = run_cli("--model", "Oracle,Random", "--task", "AudioCount", "--shots", "1,2", "--seeds", SEEDS, "--control",
                  "silence", "--max-samples", "6", "--archive", archive, cwd=root)
    assert icl.returncode == 0, icl.stderr
    return root / "results"


def forget(results: Path) -> None:
    """Delete the folder's index (its write-ahead log too): the next command builds it from the folders."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(index_path(results)) + suffix).unlink(missing_ok=True)


def views(entries) -> tuple[str, ...]:
    """What the leaderboard prints: the tables, the CSV, the paired view and its CSV (as cli/leaderboard.py does)."""
    models, _ = model_grid.model_rows(entries)
    tests = model_grid.grid_tests(model_grid.entry_answers(models), model_grid.nouns_of(models))
    return markdown(entries), to_csv(entries), model_grid.markdown(tests), model_grid.to_csv(tests)


def from_the_folders(results: Path) -> list:
    """Every run read from its files alone, as the tools read them before there was an index."""
    return [e for d in run_dirs(results) if (d / "config.json").is_file() and (e := run_entry(d)) is not None]


def test_the_index_gives_what_the_folders_give(results, capsys):
    forget(results)
    direct = views(from_the_folders(results))
    fresh = views(collect([results]))  # builds the index
    warm = views(collect([results]))  # reads it
    assert fresh == direct and warm == direct
    text = "\n".join(direct)
    assert "k=1" in direct[0] and "k=2" in direct[0] and "control" in text  # variants and controls were there
    with sqlite3.connect(index_path(results)) as db:
        runs = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        kinds = dict(db.execute("SELECT kind, COUNT(*) FROM runs GROUP BY kind").fetchall())
        answers = db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
    folders = [d for d in run_dirs(results) if (d / "metrics.json").is_file()]
    assert not any(p.name.endswith(".sqlite") for p in results.iterdir())  # a reading tool writes nothing there
    # 24 AcousticBench runs (8 real, 16 controls), 16 AudioICL (8 on their first 6 episodes: variants, 8 controls)
    assert runs == len(folders) == 40 and kinds == {"real": 8, "variant": 8, "control": 24}
    assert answers == sum(1 for d in folders for line in (d / "responses.jsonl").open("rb") if line.strip())


def test_a_changed_run_is_read_again(results, tmp_path, capsys):
    collect([results])
    run = next(d for d in run_dirs(results) if d.name.startswith("Random-rad-local-seed43"))
    before = views(collect([results]))
    lines = (run / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["correct"] = not first["correct"]  # another answer to one question: the clustered interval moves
    (run / "responses.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    try:
        after = views(collect([results]))
        assert after == views(from_the_folders(results))
        assert after[0] != before[0]
    finally:
        (run / "responses.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert views(collect([results])) == before


def test_a_run_being_written_is_read_as_it_is_and_never_stored(results, capsys):
    forget(results)
    run = next(d for d in run_dirs(results) if d.name.startswith("Oracle-dir-local-seed42"))
    lock = RunLock(run)
    try:
        entries = collect([results])
        assert any(e.run_dir == run for e in entries)
        with sqlite3.connect(index_path(results)) as db:
            assert db.execute("SELECT COUNT(*) FROM runs WHERE folder = ?", (run.name,)).fetchone()[0] == 0
            assert db.execute("SELECT COUNT(*) FROM answers WHERE folder = ?", (run.name,)).fetchone()[0] == 0
    finally:
        lock.release()
    collect([results])
    with sqlite3.connect(index_path(results)) as db:
        assert db.execute("SELECT COUNT(*) FROM runs WHERE folder = ?", (run.name,)).fetchone()[0] == 1


def test_a_damaged_index_is_built_again_and_says_so(results, capsys):
    expected = views(from_the_folders(results))
    forget(results)
    index_path(results).write_bytes(b"not a database, a few bytes of something else" * 100)
    capsys.readouterr()
    assert views(collect([results])) == expected
    assert "building the index again" in capsys.readouterr().err


def _report(results: Path, out: Path) -> str:
    """The report's page without the minute it was written at."""
    from acousticbench.tools.report import build_report

    build_report([results], out)
    return re.sub(r"written \d{4}-\d\d-\d\d \d\d:\d\d", "written -", out.read_text(encoding="utf-8"))


def test_the_report_is_the_same_from_a_fresh_index_and_a_warm_one(results, tmp_path, capsys):
    forget(results)
    fresh = _report(results, tmp_path / "fresh.html")
    assert (index_path(results)).is_file()
    assert _report(results, tmp_path / "warm.html") == fresh


def test_two_commands_building_one_index_at_once_agree(results, tmp_path):
    forget(results)
    argv = [sys.executable, "-m", "acousticbench", "leaderboard", str(results), "--paired"]
    procs = [subprocess.Popen(argv, cwd=tmp_path, env=harness_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], [err for _, err in outs]
    assert outs[0][0] == outs[1][0] and "Traceback" not in outs[0][1] + outs[1][1]


def read_as_before(entries) -> list:
    """The same entries with their answers read from responses.jsonl by the readers the tools had before the index
    (core/stats.scored_outcomes, model_grid's file reader), not from the index."""
    import dataclasses

    return [dataclasses.replace(e, scores=None) for e in entries]


def test_every_figure_read_from_the_index_is_the_one_read_from_the_files(results, capsys):
    """Both benchmarks, their controls and variants: the tables, the CSV, the paired view and its CSV."""
    forget(results)
    fresh, warm = collect([results]), collect([results])
    before = views(read_as_before(from_the_folders(results)))
    assert views(fresh) == before and views(warm) == before
    assert all(e.scores is not None for e in warm)  # they were read from the index


@contextmanager
def every_run_locked(results: Path) -> Iterator[None]:
    """Every run locked as a running command holds it: each is then read from its folder, the index left aside."""
    locks = [RunLock(d) for d in run_dirs(results) if (d / "config.json").is_file()]
    try:
        yield
    finally:
        for lock in locks:
            lock.release()


def test_the_report_from_the_index_is_the_report_from_the_folders(results, tmp_path, capsys):
    """The whole page (one file, and the page of a large folder with its answers beside it) is the same whether the
    runs are read through the index or every one from its folder."""
    from acousticbench.tools.report import build_report

    forget(results)
    indexed = _report(results, tmp_path / "indexed.html")
    build_report([results], tmp_path / "indexed-paged.html", inline_answers=10)
    with every_run_locked(results):
        direct = _report(results, tmp_path / "direct.html")
        build_report([results], tmp_path / "direct-paged.html", inline_answers=10)
    assert indexed == direct.replace("direct.html", "indexed.html")
    paged = [re.sub(r"written \d{4}-\d\d-\d\d \d\d:\d\d", "", (tmp_path / f"{name}-paged.html").read_text("utf-8"))
             for name in ("indexed", "direct")]
    assert paged[0] == paged[1].replace("direct-paged", "indexed-paged")


@pytest.fixture()
def damaged_copy(results, tmp_path) -> Path:
    """A copy of the folder where one run has a damaged middle line, another a record that does not validate and a
    third a torn last line (a kill's)."""
    import shutil

    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    by_name = {d.name.split("-2")[0]: d for d in run_dirs(copy)}
    damage = {"Oracle-rad-local-seed42": lambda lines: lines[:2] + [b'{"id": "x", "stat\n'] + lines[3:],
              "Random-rad-local-seed43": lambda lines: lines[:4] + [lines[4].replace(b'"seed":43', b'"seed":"x"')]
              + lines[5:],
              "Oracle-dir-local-seed43": lambda lines: lines[:-1] + [lines[-1][:-20]]}
    for name, change in damage.items():
        path = by_name[name] / "responses.jsonl"
        path.write_bytes(b"".join(change(path.read_bytes().splitlines(keepends=True))))
    return copy


def test_damaged_runs_are_named_and_left_out_alike_fresh_warm_and_from_the_folders(damaged_copy, tmp_path):
    """The leaderboard names the damaged line and leaves its run out, and the report names the record that does not
    validate, the same from a fresh index, a warm one, and with every run read from its folder."""
    argv = [sys.executable, "-m", "acousticbench"]
    leaderboard = [*argv, "leaderboard", str(damaged_copy), "--paired"]
    report = [*argv, "report", str(damaged_copy), "--out", str(tmp_path / "r.html")]

    def both() -> list[tuple[str, str]]:
        outs = [subprocess.run(cmd, cwd=tmp_path, env=harness_env(), capture_output=True, text=True, timeout=600)
                for cmd in (leaderboard, report)]
        assert [out.returncode for out in outs] == [0, 0], [out.stderr for out in outs]
        return [(re.sub(r", [0-9.]+ s\)", ")", out.stdout), out.stderr) for out in outs]  # the time it took aside

    fresh, warm = both(), both()
    with every_run_locked(damaged_copy):
        direct = both()
    assert fresh == warm == direct
    (board, board_err), (_, report_err) = fresh
    assert re.search(r"Oracle-rad-local-seed42-\S+/responses\.jsonl:3 is not a record \(damaged\)", board_err)
    assert re.search(r"Oracle-dir-local-seed43-\S+: responses\.jsonl is truncated", board_err)
    assert re.search(r"Random-rad-local-seed43-\S+/responses\.jsonl:5: not a valid \w+ .*left out of the report",
                     report_err)


def test_metrics_read_when_asked_are_each_run_s_own_past_the_runs_kept(results):
    """More runs than the parsed metrics kept: each still reads as its own metrics.json, in any order, again."""
    from acousticbench.benchmarks import benchmark_of_config
    from acousticbench.tools.metrics_when_asked import KEPT, MetricsWhenAsked

    runs = [d for d in run_dirs(results) if (d / "metrics.json").is_file()]
    held = []
    for i in range(KEPT + 100):
        run = runs[i % len(runs)]
        bench = benchmark_of_config(json.loads((run / "config.json").read_bytes()))
        held.append((bench.metrics_type.model_validate_json((run / "metrics.json").read_bytes()),
                     MetricsWhenAsked((run / "metrics.json").read_bytes(), bench.metrics_type)))
    for parsed, lazy in [*held, *reversed(held), *held]:
        assert lazy.model_dump() == parsed.model_dump() and lazy.model_fields_set == parsed.model_fields_set
    assert getattr(held[0][1], "no_such_field", None) is None
