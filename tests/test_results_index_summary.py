"""AudioICL's summary CSVs (`acousticbench eval-str`, strict and lenient, and the sweep's audioicl_summary.csv) count
each run's answers once and keep the counts in the results index: byte for byte what they write counting every run
from its file, over real runs, controls and variants, a torn run and a damaged middle line; a run changed after its
counts were kept is counted again."""
from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from harness_cli import harness_env, run_dirs
from test_results_index import forget, results  # noqa: F401 (the fixture)

from acousticbench.tools.results_index import index_path


def no_cache(tmp_path: Path) -> dict[str, str]:
    """An environment whose harness cache cannot be made (under a file): every run is counted from its file."""
    (tmp_path / "not-a-folder").write_text("")
    return {"ACOUSTICBENCH_CACHE_DIR": str(tmp_path / "not-a-folder" / "cache")}


def summaries(folder: Path, out: Path, **env: str) -> tuple:
    """What eval-str writes (strict and lenient: its CSV, or its exit code and stderr) and the sweep's summary CSV
    with its notes, each in a fresh process; the CSVs as their bytes say them (line ends included)."""
    written = []
    for scoring in ("strict", "lenient"):
        csv = out / f"eval-str-{scoring}.csv"
        argv = ["eval-str", "--in", str(folder), "--out", str(csv), "--scoring", scoring]
        done = subprocess.run([sys.executable, "-m", "acousticbench", *argv], cwd=out, env=harness_env(**env),
                              capture_output=True, text=True, timeout=300)
        written.append(csv.read_bytes().decode() if done.returncode == 0 else (done.returncode, done.stderr))
    sweep = "import sys; from pathlib import Path; from acousticbench.benchmarks.audioicl.face import write_summary\n" \
            "from acousticbench.core.errors import run_command\n" \
            "summary = lambda: write_summary(Path(sys.argv[1]), 'specific', 'strict', None) and 0\n" \
            "sys.exit(run_command(summary, interrupted='-'))"  # a refusal: its line and exit 2, as after a sweep
    done = subprocess.run([sys.executable, "-c", sweep, str(folder)], cwd=out, env=harness_env(**env),
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    made = folder / "audioicl_summary.csv"
    written.append((made.read_bytes().decode() if made.is_file() else None, done.returncode, done.stderr))
    made.unlink(missing_ok=True)  # the next call writes its own
    return tuple(written)


def kept_counts(folder: Path) -> int:
    with sqlite3.connect(index_path(folder)) as db:
        return db.execute("SELECT COUNT(*) FROM derived").fetchone()[0]


def icl_runs(folder: Path) -> list[Path]:
    return [d for d in run_dirs(folder) if json.loads((d / "config.json").read_bytes())["spec"]["benchmark"]
            == "AudioICL"]


@pytest.fixture()
def copy(results, tmp_path) -> Path:  # noqa: F811
    shutil.copytree(results, tmp_path / "results")
    return tmp_path / "results"


def test_the_summaries_from_kept_counts_are_the_summaries_from_the_files(copy, tmp_path):
    forget(copy)
    fresh, warm = summaries(copy, tmp_path), summaries(copy, tmp_path)
    direct = summaries(copy, tmp_path, **no_cache(tmp_path))
    assert fresh == warm == direct
    strict, lenient, (sweep, code, _) = direct
    assert code == 0 and "[control: silence]" in strict and "Random" in lenient and ",silence," in sweep
    assert kept_counts(copy) == len(icl_runs(copy))  # every run counted once and kept


def test_a_run_changed_after_its_counts_were_kept_is_counted_again(copy, tmp_path):
    forget(copy)
    before = summaries(copy, tmp_path)
    run = next(d for d in icl_runs(copy) if d.name.startswith("Random-AudioCount"))
    lines = (run / "responses.jsonl").read_bytes().splitlines(keepends=True)
    record = json.loads(lines[0])
    record["correct"], record["response"] = not record["correct"], f"The answer is {record['gt']}."
    (run / "responses.jsonl").write_bytes(json.dumps(record).encode() + b"\n" + b"".join(lines[1:]))
    after = summaries(copy, tmp_path)
    assert after != before and after == summaries(copy, tmp_path, **no_cache(tmp_path))


def test_a_torn_run_and_a_damaged_line_are_said_alike_with_kept_counts_and_without(copy, tmp_path):
    runs = icl_runs(copy)
    torn = runs[0] / "responses.jsonl"
    torn.write_bytes(torn.read_bytes()[:-15])  # a kill's last line
    forget(copy)
    fresh, warm = summaries(copy, tmp_path), summaries(copy, tmp_path)
    assert fresh == warm == summaries(copy, tmp_path, **no_cache(tmp_path))
    assert "was cut short by a crash" in warm[2][2]  # said again: a torn run's counts are never kept
    assert warm[0][0] == 2 and "is damaged (cut short by a crash)" in warm[0][1]  # eval-str refuses it, as ever
    assert kept_counts(copy) == len(runs) - 1
    damaged = runs[1] / "responses.jsonl"
    lines = damaged.read_bytes().splitlines(keepends=True)
    damaged.write_bytes(b"".join([lines[0], b'{"id": "x", "sh\n', *lines[2:]]))
    fresh, warm = summaries(copy, tmp_path), summaries(copy, tmp_path)
    assert fresh == warm == summaries(copy, tmp_path, **no_cache(tmp_path))
    assert fresh[2][1] == 2 and re.search(r"responses\.jsonl:2 \(item x\) is damaged", fresh[2][2])  # the sweep's
