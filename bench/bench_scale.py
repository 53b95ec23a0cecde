#!/usr/bin/env python3
"""Benchmark the tools over a lab's results folder: N run folders of the local models (Oracle, Random, Always-A over the
eight AcousticBench tasks and as many seeds as N needs), then `acousticbench leaderboard` and `acousticbench report`
timed in fresh processes, first (nothing cached) and warm (again on the same folder), each with its peak memory.
With --audioicl: N AudioICL run folders (Oracle and Random over its nine tasks at k = 1, 3, 5, on a reduced pack built
here when --archive has none) and `acousticbench eval-str`, strict and lenient, instead.

The runs of seed 42 are real runs of the harness (made once, with --archive); the other seeds are copies of them with
their seed rewritten in config.json, metrics.json and every record: valid run folders that every tool reads, made in
seconds where 480 real runs take half an hour on 2 cores.

    .venv/bin/python bench/bench_scale.py --runs 480 --archive ARCHIVE [--keep DIR] [--code DIR] [--every-tool]
    .venv/bin/python bench/bench_scale.py --audioicl --runs 2000 [--keep DIR] [--code DIR]
    .venv/bin/python bench/bench_scale.py --keep DIR --every-tool --only compare --repeat 3

--only times only the tools whose name holds that text; --repeat prints each one's median of that many runs.

--code runs the tools of another checkout (PYTHONPATH) on the same folder, for a before/after figure."""
from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODELS = "Oracle,Random,Always-A"
FIRST_SEED = 42
ICL_MODELS, ICL_SHOTS = "Oracle,Random", "1,3,5"  # 54 real runs
ICL_EPISODES = 20  # per task of the reduced pack built when --archive has no AudioICL pack: 20 answers per run
# the results index of a folder, deleted before the first command (a checkout without one deletes nothing)
FORGET = """import sys
try:
    from acousticbench.tools.results_index import index_path
except ImportError:
    sys.exit(0)
for suffix in ("", "-wal", "-shm"):
    index_path(sys.argv[1]).with_name(index_path(sys.argv[1]).name + suffix).unlink(missing_ok=True)
"""


def real_runs(base: Path, archive: Path, audioicl: bool = False) -> list[Path]:
    """The seed-42 runs of the three local models on every task (made here once, kept in `base`); with `audioicl`,
    of ICL_MODELS on every AudioICL task at ICL_SHOTS."""
    runs = sorted(p for p in base.glob("*-seed42-*") if (p / "metrics.json").is_file()) if base.is_dir() else []
    if not runs:
        what = ["--model", ICL_MODELS, "--task", "audioicl", "--shots", ICL_SHOTS] if audioicl else \
            ["--model", MODELS, "--task", "all"]
        subprocess.run([sys.executable, "-m", "acousticbench", "run", *what, "--seed", str(FIRST_SEED),
                        "--archive", str(archive), "--results-dir", str(base)],
                       check=True, stdout=subprocess.DEVNULL, env=_env(REPO))
        runs = sorted(p for p in base.glob("*-seed42-*") if (p / "metrics.json").is_file())
    return runs


def copy_with_seed(run: Path, results: Path, seed: int) -> None:
    """`run` as the run of `seed`: its folder name, config.json's spec and settings, metrics.json and every record."""
    folder = results / run.name.replace(f"-seed{FIRST_SEED}-", f"-seed{seed}-")
    folder.mkdir()
    config = json.loads((run / "config.json").read_bytes())
    for section in ("spec", "settings"):
        if isinstance(config.get(section), dict) and "seed" in config[section]:
            config[section]["seed"] = seed
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    metrics = json.loads((run / "metrics.json").read_bytes())
    metrics["seed"] = seed
    (folder / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")
    seed_field = f'"seed":{FIRST_SEED},'.encode()  # as the harness writes a record (compact JSON): its field, once
    with (run / "responses.jsonl").open("rb") as src, (folder / "responses.jsonl").open("wb") as out:
        for line in src:
            assert seed_field in line, f"{run}: a record without {seed_field!r}"
            out.write(line.replace(seed_field, f'"seed":{seed},'.encode(), 1))


def icl_archive(archive: Path, work: Path) -> Path:
    """`archive` when it holds the AudioICL pack, else a reduced pack of ICL_EPISODES per task built in `work` once."""
    if (archive / "audioicl").is_dir():
        return archive
    if not (work / "icl-archive" / "audioicl").is_dir():
        build = "import sys; from acousticbench.benchmarks.audioicl.build import build_audioicl; " \
                f"build_audioicl(sys.argv[1], episodes_per_task={ICL_EPISODES})"
        subprocess.run([sys.executable, "-c", build, str(work / "icl-archive")], check=True, env=_env(REPO))
    return work / "icl-archive"


def eval_str(results: Path, work: Path) -> Iterator[tuple[str, list[str]]]:
    """AudioICL's summary CSV over `results`: strict, again, and lenient scoring."""
    for name, scoring in (("eval-str", "strict"), ("eval-str again", "strict"), ("eval-str lenient", "lenient")):
        yield name, ["eval-str", "--in", str(results), "--out", str(work / "summary.csv"), "--scoring", scoring]


def make_results(results: Path, base_runs: list[Path], n: int) -> None:
    """N run folders: the real runs, then their copies as seeds 43, 44, ... until there are N."""
    results.mkdir(parents=True)
    for i in range(n):
        run, seed = base_runs[i % len(base_runs)], FIRST_SEED + i // len(base_runs)
        if seed == FIRST_SEED:
            shutil.copytree(run, results / run.name)
        else:
            copy_with_seed(run, results, seed)


def _env(code: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(code), "OPENBLAS_NUM_THREADS": "1"}


def timed(argv: list[str], code: Path, cwd: Path) -> tuple[float, float, int]:
    """(seconds, peak resident MB, exit code) of one command in a fresh process (os.wait4: its own rusage only)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "acousticbench", *argv], cwd=cwd, env=_env(code),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_maxrss / 1024, proc.returncode


def measure(results: Path, code: Path, work: Path) -> Iterator[tuple[str, list[str]]]:
    """Each tool first (no index) and warm (again), over `results` with the tools of `code`, as each ends."""
    subprocess.run([sys.executable, "-c", FORGET, str(results)], env=_env(code), check=False)
    shutil.rmtree(work / "report-answers", ignore_errors=True)  # a large folder's answer pages, kept when unchanged
    for name, argv in (("leaderboard", ["leaderboard", str(results)]),
                       ("report", ["report", str(results), "--out", str(work / "report.html")])):
        for when in ("first", "warm"):
            yield f"{name} {when}", argv


def every_tool(results: Path, work: Path) -> Iterator[tuple[str, list[str]]]:
    """The other tools over the folder, warm (after measure()): the CSV, the paired view, compare of two runs and of
    two models' cells (every seed of Oracle on rad against Random's), the references (every seed of Oracle on rad
    promoted, then the leaderboard beside them) and AudioICL's summary CSV."""
    oracle, random = sorted(results.glob("Oracle-rad-*")), sorted(results.glob("Random-rad-*"))
    refs = work / "references"
    shutil.rmtree(refs, ignore_errors=True)
    for name, argv in (("leaderboard --csv", ["leaderboard", str(results), "--csv"]),
                       ("leaderboard --paired", ["leaderboard", str(results), "--paired"]),
                       ("compare", ["compare", str(oracle[0]), str(oracle[1])]),
                       (f"compare --vs {len(oracle)} seeds", ["compare", *map(str, oracle), "--vs", *map(str, random)]),
                       ("reference promote", ["reference", "promote", "--references", str(refs), *map(str, oracle)]),
                       ("leaderboard --references", ["leaderboard", str(results), "--references", str(refs)]),
                       ("eval-str", ["eval-str", "--in", str(results), "--out", str(work / "summary.csv")])):
        yield name, argv


def median_of(repeat: int, argv: list[str], code: Path, cwd: Path) -> tuple[float, float, int]:
    """timed() `repeat` times in a row: the median seconds, the largest peak, the first failing exit code."""
    import statistics

    tries = [timed(argv, code, cwd) for _ in range(repeat)]
    return statistics.median(t[0] for t in tries), max(t[1] for t in tries), next((t[2] for t in tries if t[2]), 0)


def first_view(page: Path) -> tuple[float, float] | None:
    """(seconds from navigation until the report's page is drawn and live in headless chromium, body[data-ready];
    the page's own performance.now() then), or None without chromium."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path("/usr/bin/chromium").exists() or not page.is_file():
        return None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        tab = browser.new_page()
        started = time.perf_counter()
        tab.goto(page.resolve().as_uri(), timeout=120_000)
        tab.wait_for_selector("body[data-ready='1']", timeout=120_000)
        wall = time.perf_counter() - started
        own = float(tab.get_attribute("body", "data-ready-ms")) / 1000
        browser.close()
    return wall, own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=480, help="run folders to make (24 per seed)")
    parser.add_argument("--archive", type=Path, default=Path(os.environ.get("ACOUSTICBENCH_TEST_ARCHIVE", "archive")),
                        help="the built open pack the seed-42 runs are made on")
    parser.add_argument("--keep", type=Path, help="make the runs here and keep them (reused when present)")
    parser.add_argument("--audioicl", action="store_true",
                        help="AudioICL runs and eval-str instead (a reduced pack is built when --archive has none)")
    parser.add_argument("--every-tool", action="store_true",
                        help="then time the CSV, --paired, compare, the references and eval-str too")
    parser.add_argument("--only", default="", help="time only the tools whose name holds this text ('compare')")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each timed tool this many times in a row and print the median (a 'first' once)")
    parser.add_argument("--code", type=Path, action="append", default=[],
                        help="also time the tools of this checkout on the same folder (repeatable)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    results = work / f"results-{'audioicl-' * args.audioicl}{args.runs}"
    if not results.is_dir():
        started = time.perf_counter()
        base = real_runs(work / "seed42-audioicl", icl_archive(args.archive, work), True) if args.audioicl else \
            real_runs(work / "seed42", args.archive)
        make_results(results, base, args.runs)
        print(f"made {args.runs} run folders in {time.perf_counter() - started:.0f} s: {results}")
    answers = sum(1 for run in results.glob("*/responses.jsonl") for _ in run.open("rb"))
    print(f"{args.runs} runs, {answers} answers")
    for code in [REPO, *args.code]:
        print(f"\ntools of {code}:")
        tools = eval_str(results, work) if args.audioicl else measure(results, code, work)
        more = every_tool(results, work) if args.every_tool and not args.audioicl else ()
        for name, argv in (tool for tool in itertools.chain(tools, more) if args.only in tool[0]):
            seconds, mb, rc = median_of(1 if name.endswith("first") else args.repeat, argv, code, work)
            print(f"  {name:22s} {seconds:7.1f} s  peak {mb:7.0f} MB" + (f"  exit {rc}" if rc else ""), flush=True)
        shown = first_view(work / "report.html")
        if shown:
            print(f"  report in chromium: first view drawn {shown[0]:.2f} s after navigation (the page's own clock "
                  f"{shown[1]:.2f} s), {(work / 'report.html').stat().st_size / 1e6:.1f} MB")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
