#!/usr/bin/env python3
"""Benchmark a model served by replicas found in a registry folder (--endpoints-from): the command a user runs,
`run.py --model Voxtral-Mini-3B --task rad --judge rules --endpoints-from DIR --concurrency 16`, against one replica
and against two, each a lean local server answering in --delay seconds (a set latency, so one replica's throughput
is its limit / latency), taken in turn.

    .venv/bin/python bench/bench_replicas.py [--questions 797] [--delay 1.0] [--concurrency 16] [--repeats 3]

Per setting, medians over the repeats: the run's own time (first request to last answer, as the servers saw them),
questions/s over it, and the process's time from start to exit. Target (issue 38): two replicas >= 1.8x one, in
questions/s over the run. A pack of noise clips with --questions scored questions is built in a temporary folder.
With a latency of 1 s the servers, not the harness, are the limit even on two shared cores.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from bench_capacity import stats  # noqa: E402  the servers' own counts and clocks
from bench_engine import start_server  # noqa: E402  the same lean server process

from acousticbench.models import replicas  # noqa: E402

MODEL, SERVE = "Voxtral-Mini-3B", "voxtral_mini_3b"


def one_run(args, archive: Path, urls: list[str], workdir: Path, tag: str) -> dict:
    """One command against a registry holding `urls`; the servers' clocks give the run's own time."""
    registry = workdir / f"registry-{tag}"
    for i, url in enumerate(urls):
        replicas.write(registry, SERVE, f"bench_{i}", url, job=f"bench_{i}")
    for url in urls:
        stats(url, reset=True)
    command = [sys.executable, str(REPO / "run.py"), "--model", MODEL, "--task", "rad", "--seed", "42", "--judge",
               "rules", "--archive", str(archive), "--results-dir", str(workdir / f"results-{tag}"),
               "--endpoints-from", str(registry), "--concurrency", str(args.concurrency)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACOUSTICBENCH_") or k == "ACOUSTICBENCH_CACHE_DIR"}
    started, clock = time.perf_counter(), time.time()
    out = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env)
    wall = time.perf_counter() - started
    if out.returncode != 0:
        raise SystemExit(f"the command failed (exit {out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    (run,) = [p for p in (workdir / f"results-{tag}").iterdir() if p.is_dir()]
    lines = [json.loads(line) for line in (run / "responses.jsonl").read_text().splitlines()]
    after = [stats(url) for url in urls]
    first = min(a["first_arrival"] for a in after if a["first_arrival"])
    last = max(a["last_reply"] for a in after)
    lanes = json.loads((run / "config.json").read_text())["concurrency"]["endpoints"]
    return {"wall_s": wall, "run_s": last - first, "questions": len(lines),
            "lost": sum(r["status"] != "answered" for r in lines), "answered_by": [lane["answered"] for lane in lanes],
            "start_s": first - clock}


def report(name: str, runs: list[dict]) -> float:
    run_s = statistics.median(r["run_s"] for r in runs)
    rate = statistics.median(r["questions"] / r["run_s"] for r in runs)
    each = ", ".join(f"{r['run_s']:.2f}" for r in runs)
    print(f"{name}: {runs[0]['questions']} questions, {rate:.1f} questions/s over the run (median), run "
          f"{run_s:.2f} s ({each}), process start to exit "
          f"{statistics.median(r['wall_s'] for r in runs):.2f} s, answered per replica {runs[-1]['answered_by']}, "
          f"{max(r['lost'] for r in runs)} lost (worst run)", flush=True)
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=797,
                        help="scored questions (3 more are added): 800 in all, whole rounds of 16 and of 32")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds each answer takes (a set latency)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from acousticbench.benchmarks.acoustic.pack.synthetic import write_noise_pack

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        archive = write_noise_pack(workdir / "archive", "rad", args.questions)
        servers = [start_server(args.delay, workdir), start_server(args.delay, workdir)]
        urls = [url for _, url in servers]
        one: list[dict] = []
        two: list[dict] = []
        try:
            for i in range(args.repeats):  # taken in turn: a machine whose speed drifts moves both alike
                one.append(one_run(args, archive, urls[:1], workdir, f"one-{i}"))
                two.append(one_run(args, archive, urls, workdir, f"two-{i}"))
        finally:
            for proc, _ in servers:
                proc.terminate()
                proc.wait()
    floor = args.concurrency / args.delay
    print(f"(one replica's limit: {args.concurrency} in flight / {args.delay:g} s = {floor:.0f} questions/s)")
    alone = report("one replica", one)
    both = report("two replicas", two)
    ratio = statistics.median(b["questions"] / b["run_s"] / (a["questions"] / a["run_s"]) for a, b in zip(one, two))
    print(f"two replicas / one: {both / alone:.2f}x in median questions/s, {ratio:.2f}x median of the pairs "
          "(target >= 1.8x)", flush=True)


if __name__ == "__main__":
    main()
