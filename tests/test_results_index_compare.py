"""`acousticbench compare` reads its runs' answers through the results index (two runs, and every seed of two cells
with --vs) and prints exactly what it prints reading every run from its folder: over both benchmarks, their controls
and variants, a torn run and a damaged middle line; a run changed after the index was built is read as it now is."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from harness_cli import harness_env, run_dirs
from test_results_index import damaged_copy, every_run_locked, forget, results  # noqa: F401 (the fixtures)

from acousticbench.api.tools import compare
from acousticbench.benchmarks import run_identity_of
from acousticbench.core.errors import UserError
from acousticbench.tools.results_index import index_path


def runs_of(folder: Path, model: str, task: str, control: str | None = None, first: bool = False) -> list[Path]:
    """The run folders of one model's cell (every seed), real, a variant (`first`: its first N) or a control."""
    found = []
    for run in run_dirs(folder):
        config = json.loads((run / "config.json").read_bytes())
        who = run_identity_of(config)
        if (who.model, who.cell, who.control, bool(who.first)) == (model, task, control, first):
            found.append(run)
    return sorted(found, key=lambda run: run.name)


def pairs(folder: Path) -> dict[str, tuple[list[Path], list[Path]]]:
    """Sides to compare: two runs and two cells of each benchmark, a control against its real run, two variants."""
    oracle, rand = runs_of(folder, "Oracle", "rad"), runs_of(folder, "Random", "rad")
    icl = [runs_of(folder, model, "AudioCount k=1", first=True) for model in ("Oracle", "Random")]
    return {"two runs": ([oracle[0]], [rand[0]]), "cells": (oracle, rand),
            "control": (runs_of(folder, "Oracle", "dir"), runs_of(folder, "Oracle", "dir", "swap")),
            "silence": ([runs_of(folder, "Random", "rad", "silence")[1]], [rand[1]]),
            "AudioICL runs": ([icl[0][0]], [icl[1][0]]), "AudioICL cells": tuple(icl),
            "AudioICL control": (icl[0], runs_of(folder, "Oracle", "AudioCount k=1", "silence", first=True))}


def printed(a: list[Path], b: list[Path]) -> tuple[str, ...]:
    """What `acousticbench compare` prints (stdout, then each torn line's note), or the line it refuses with."""
    try:
        comparison = compare(a, b)
    except UserError as err:
        return ("error", str(err))
    return ("\n".join(comparison.lines()), *(line.describe() for line in comparison.torn))


def every_comparison(folder: Path) -> dict[str, tuple[str, ...]]:
    return {name: printed(a, b) for name, (a, b) in pairs(folder).items()}


def from_the_folders(folder: Path) -> dict[str, tuple[str, ...]]:
    """Every run locked as a running command holds it: compare then reads each from its folder, never the index."""
    with every_run_locked(folder):
        return every_comparison(folder)


def indexed_folders(folder: Path) -> set[str]:
    with sqlite3.connect(index_path(folder)) as db:
        return {name for (name,) in db.execute("SELECT DISTINCT folder FROM answers")}


def test_compare_through_the_index_prints_what_it_prints_from_the_folders(results):  # noqa: F811
    forget(results)
    fresh, warm, direct = every_comparison(results), every_comparison(results), from_the_folders(results)
    assert fresh == direct and warm == direct
    assert all(out[0] != "error" and "Accuracy on the" in out[0] for out in direct.values()), direct
    assert "[control: swap]" in direct["control"][0] and "episodes" in direct["AudioICL cells"][0]
    compared = {run.name for a, b in pairs(results).values() for run in [*a, *b]}
    assert compared <= indexed_folders(results)  # they were read through the index, which now holds them


def test_compare_sees_a_run_changed_after_the_index_was_built(results):  # noqa: F811
    a, b = pairs(results)["cells"]
    before = printed(a, b)
    path = b[1] / "responses.jsonl"
    kept = path.read_bytes()
    lines = kept.splitlines(keepends=True)
    record = json.loads(lines[0])
    record["chosen"] = "A" if record["chosen"] != "A" else "B"  # another answer to the first question
    record["correct"] = not record["correct"]
    path.write_bytes(json.dumps(record).encode() + b"\n" + b"".join(lines[1:]))
    try:
        after = printed(a, b)
        assert after != before
        assert after == from_the_folders(results)["cells"]
    finally:
        path.write_bytes(kept)
    assert printed(a, b) == before


def test_a_question_answered_again_later_counts_as_its_last_answer_as_in_the_file(results):  # noqa: F811
    """A line appended for a question already answered (what --resume writes after an error) replaces the earlier
    answer in the earlier one's place, through the index as from the file."""
    a, b = pairs(results)["cells"]
    path = b[0] / "responses.jsonl"
    kept = path.read_bytes()
    record = json.loads(kept.splitlines()[0])
    record["chosen"] = "A" if record["chosen"] != "A" else "B"
    record["correct"] = not record["correct"]
    path.write_bytes(kept + json.dumps(record).encode() + b"\n")
    try:
        again = printed(a, b)
        assert again == from_the_folders(results)["cells"]
    finally:
        path.write_bytes(kept)
    assert printed(a, b) != again  # the appended answer changed what was printed


def test_a_torn_run_and_damaged_lines_are_said_alike_through_the_index_and_from_the_folders(damaged_copy):  # noqa: F811
    """The torn run is compared without its cut line, named; a damaged middle line and a record that does not
    validate are refused in one line naming it: the same from a fresh index, a warm one and the folders."""
    oracle_dir, oracle_rad, random_rad = (runs_of(damaged_copy, *cell) for cell in
                                          (("Oracle", "dir"), ("Oracle", "rad"), ("Random", "rad")))
    cases = {"torn": ([oracle_dir[1]], [oracle_dir[0]]),
             "torn cell": (oracle_dir, runs_of(damaged_copy, "Random", "dir")),
             "damaged": ([oracle_rad[0]], [random_rad[0]]), "invalid": ([oracle_rad[1]], [random_rad[1]])}

    def said() -> dict[str, tuple[str, ...]]:
        return {name: printed(a, b) for name, (a, b) in cases.items()}

    forget(damaged_copy)
    fresh, warm = said(), said()
    with every_run_locked(damaged_copy):
        direct = said()
    assert fresh == warm == direct
    assert "was cut short by a crash" in direct["torn"][1] and direct["torn cell"][1] == direct["torn"][1]
    assert direct["damaged"][0] == "error" and "responses.jsonl:3: not a valid" in direct["damaged"][1]
    assert direct["invalid"][0] == "error" and "responses.jsonl:5: not a valid" in direct["invalid"][1]


def test_the_command_prints_the_comparison_and_the_torn_note(damaged_copy, tmp_path):  # noqa: F811
    oracle_dir = runs_of(damaged_copy, "Oracle", "dir")
    argv = [sys.executable, "-m", "acousticbench", "compare", *map(str, oracle_dir), "--vs",
            *map(str, runs_of(damaged_copy, "Random", "dir"))]
    out = subprocess.run(argv, cwd=tmp_path, env=harness_env(), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    expected = compare(oracle_dir, runs_of(damaged_copy, "Random", "dir"))
    assert out.stdout == "\n".join(expected.lines()) + "\n"
    assert f"note: {expected.torn[0].describe()}" in out.stderr


@pytest.mark.parametrize("given", ["responses.jsonl alone", "unfinished run"])
def test_a_run_outside_a_finished_results_folder_is_read_from_its_file(results, tmp_path, given):  # noqa: F811
    """A responses.jsonl copied on its own, or a run without metrics.json, is read from its file: the same lines."""
    import shutil

    a, b = pairs(results)["two runs"]
    expected = printed(a, b)
    if given == "responses.jsonl alone":
        shutil.copy(b[0] / "responses.jsonl", tmp_path / "responses.jsonl")
        other = tmp_path / "responses.jsonl"
    else:
        other = tmp_path / "results" / b[0].name
        shutil.copytree(b[0], other)
        (other / "metrics.json").unlink()
    got = printed(a, [other])
    assert got[0].replace(str(other), str(b[0])).split("\nServing")[0].rstrip() == expected[0].split("\nServing")[0]
    assert not index_path(other.parent).is_file()  # nothing stored of a run that is not a finished one
