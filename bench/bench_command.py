#!/usr/bin/env python3
"""Benchmark a whole command as a user runs it: `run.py --model Voxtral-Mini-3B --task all --seed 42 --concurrency 64
--judge rules` against a local OpenAI-compatible server that answers every request after 200 ms, timed from process
start to exit (interpreter start, imports, loading the pack, opening the backend, every run, metrics, the table).

    .venv/bin/python bench/bench_command.py [--archive DIR] [--repeats 3] [--delay 0.2] [--concurrency 64]

The ideal is questions x delay / concurrency (3,800 x 0.2 / 64 = 11.9 s for the whole open pack); the figure is the
median over the repeats of ideal / measured (targets, issue 25: >= 95% for --task all, >= 85% for --task rad), with
the time from process start to the first request and from the last answer to exit as the server saw them, and the
command's peak memory (ru_maxrss; target <= 150 MB for --task all). --archive defaults to ./archive (built with
--build-archive if absent).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_capacity import stats  # noqa: E402  the server's counts and clocks
from bench_engine import start_server  # noqa: E402  the same lean server process as the engine benchmark

VARIABLE = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"


def questions_in(archive: Path, tasks: list[str]) -> int:
    manifest = json.loads((archive / "MANIFEST.json").read_text())
    return sum(v["n_scored"] + v["n_diagnostic"] for k, v in manifest["tasks"].items() if k in tasks)


def timed(archive: Path, results: Path, url: str, task: str, concurrency: str,
          extra: tuple[str, ...] = ()) -> tuple[float, float, float, float]:
    """Seconds from process start to exit, to the first request, from the last answer to exit; peak RSS in MB."""
    command = [sys.executable, str(REPO / "run.py"), "--model", "Voxtral-Mini-3B", "--task", task,
               "--concurrency", str(concurrency), "--judge", "rules", "--archive", str(archive),
               "--results-dir", str(results), *(extra or ("--seed", "42"))]
    stats(url, reset=True)
    clock, started = time.time(), time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, VARIABLE: url, "ACOUSTICBENCH_RETRY_BASE_DELAY": "0"})
    elapsed = time.perf_counter() - started
    if out.returncode != 0 or (" 0 errors" not in out.stdout and not extra):
        raise SystemExit(f"the command failed (exit {out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    seen = stats(url)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest child so far: the server or a run
    return elapsed, seen["first_arrival"] - clock, clock + elapsed - seen["last_reply"], rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=REPO / "archive")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", default="64", help="N, or auto (then the ideal is still at N = 64)")
    parser.add_argument("--adaptive", choices=("psi", "staircase"), help="time adaptive runs instead of the pack's")
    args = parser.parse_args()
    if not (args.archive / "MANIFEST.json").is_file():
        subprocess.run([sys.executable, str(REPO / "run.py"), "--build-archive", "--archive", str(args.archive)],
                       check=True, cwd=REPO)
    tasks = json.loads((args.archive / "MANIFEST.json").read_text())["tasks"]
    with tempfile.TemporaryDirectory(prefix="bench_command-") as tmp:
        server, url = start_server(args.delay, Path(tmp))
        try:
            if args.adaptive:
                return adaptive(args, url, Path(tmp))
            for task, names in (("all", list(tasks)), ("rad", ["rad"])):
                n = questions_in(args.archive, names)
                ideal = n * args.delay / (64 if args.concurrency == "auto" else int(args.concurrency))
                runs = [timed(args.archive, Path(tmp) / f"results-{task}-{i}", url, task, args.concurrency)
                        for i in range(args.repeats)]
                median, first, last = (statistics.median(r[i] for r in runs) for i in range(3))
                print(f"--task {task}: {n} questions, {median:.2f} s from process start to exit (median of "
                      f"{args.repeats}: {', '.join(f'{r[0]:.2f}' for r in runs)}); ideal {ideal:.2f} s -> "
                      f"{ideal / median:.0%} of ideal (target >= {95 if task == 'all' else 85}%); process start "
                      f"to first request {first:.2f} s, last answer to exit {last:.2f} s; peak RSS so far "
                      f"{max(r[3] for r in runs):.0f} MB", flush=True)
        finally:
            server.terminate()
            server.wait()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end (other work shares them)")


def adaptive(args, url: str, tmp: Path) -> None:
    """The adaptive cases: every task at two seeds (64 tracks at once), then the slowest task to make alone."""
    ideal = 60 * args.delay  # the default --adaptive-trials, each waiting for the answer before it
    for task, seeds in (("all", "1,2"), ("rad", "42")):
        extra = ("--seeds", seeds, "--adaptive", args.adaptive, "--no-canary")  # the tracks alone
        runs = [timed(args.archive, tmp / f"adaptive-{task}-{i}", url, task, args.concurrency, extra)
                for i in range(args.repeats)]
        phases = [r[0] - r[1] - r[2] for r in runs]  # first request to last answer
        median = statistics.median(phases)
        print(f"--task {task} --seeds {seeds} --adaptive {args.adaptive}: request phase {median:.2f} s (median of "
              f"{args.repeats}: {', '.join(f'{p:.2f}' for p in phases)}); ideal {ideal:.2f} s -> {ideal / median:.0%} "
              f"of ideal; process start to exit {statistics.median(r[0] for r in runs):.2f} s; peak RSS so far "
              f"{max(r[3] for r in runs):.0f} MB", flush=True)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end (other work shares them)")


if __name__ == "__main__":
    main()
