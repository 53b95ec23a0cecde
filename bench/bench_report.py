#!/usr/bin/env python3
"""Benchmark `run.py --report` at the issue's scale: 10 models x 8 tasks x 3 seeds of synthetic AcousticBench run
folders (114,000 records; answers from a psychometric curve per model and task). Reports the build time (a fresh
process, as a user runs it; target under 15 s on 2 cores), the HTML size, and the time until the page is interactive
in headless chromium (body[data-ready]: the data parsed and the first page of answers drawn).

    .venv/bin/python bench/bench_report.py [--keep DIR]"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # set before numpy loads: each worker fits, idle BLAS threads spin

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]  # this checkout, whatever the venv was installed from
MODELS = [f"Model-{i:02d}" for i in range(10)]
SEEDS = (42, 43, 44)


def _one(args: tuple) -> None:
    from report_runs import write_run

    results, model, task, seed, midpoint = args
    write_run(Path(results), model, task, seed, midpoint)


def make_results(results: Path) -> int:
    from acousticbench.benchmarks.acoustic.tasks import TASKS

    jobs = [(str(results), m, t, s, 1.5 + 0.45 * i + 0.1 * j) for i, m in enumerate(MODELS)
            for j, t in enumerate(TASKS) for s in SEEDS]
    with ProcessPoolExecutor() as pool:
        list(pool.map(_one, jobs, chunksize=4))
    return len(jobs)


FILTER = """() => { const t = performance.now(), s = document.getElementById('f-correct');
  s.value = 'wrong'; s.dispatchEvent(new Event('change')); return performance.now() - t; }"""


def time_to_interactive(page_path: Path) -> tuple[float, float, float] | None:
    """(seconds from navigation to body[data-ready], the page's own performance.now() at that moment, milliseconds
    one filter change takes over every record and redraws the page) or None without chromium."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path("/usr/bin/chromium").exists():
        return None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page()
        started = time.perf_counter()
        page.goto(page_path.resolve().as_uri(), timeout=120_000)
        page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        wall = time.perf_counter() - started
        own = float(page.get_attribute("body", "data-ready-ms")) / 1000
        filtering = page.evaluate(FILTER)
        browser.close()
    return wall, own, filtering


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="write the runs and the report here and keep them")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-report-"))
    results = work / "results"
    if not results.is_dir():
        started = time.perf_counter()
        n = make_results(results)
        print(f"wrote {n} synthetic run folders in {time.perf_counter() - started:.0f} s")
    out = work / "report.html"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(REPO / "run.py"), "--report", str(results), "--out", str(out)],
                          capture_output=True, text=True, cwd=work)
    build = time.perf_counter() - started
    if done.returncode:
        sys.exit(done.stderr)
    print(done.stdout.strip())
    print(f"build: {build:.1f} s (fresh process, interpreter start included); HTML {out.stat().st_size / 1e6:.1f} MB")
    tti = time_to_interactive(out)
    print("time to interactive: " + ("chromium or playwright missing" if tti is None else
                                     f"{tti[0]:.2f} s from navigation (page's own clock: {tti[1]:.2f} s); "
                                     f"a filter change over every answer: {tti[2]:.0f} ms"))
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
