#!/usr/bin/env python3
"""Benchmark what the start-of-run canary costs a plain run: `run.py --model Voxtral-Mini-3B --task rad --judge rules`
on a small noise pack against our OpenAI-wire server, honest and with only the canary's probes stalling, each with
and without --no-canary, timed from process start to exit (the median over the repeats).

    .venv/bin/python bench/bench_canary.py [--repeats 3]

Targets (issue 47): against an honest server the probes add seconds at most (well under one once their clips are
cached); a stalling server delays the run by at most about 10 s (the canary's 6 s per probe, 8 s in all), where the
run's own retry policy would take minutes.
"""
from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO)]
from acousticbench.benchmarks.acoustic.pack.synthetic import write_noise_pack  # noqa: E402
from acousticbench.run.canary import probes  # noqa: E402
from harness_cli import harness_env, run_cli  # noqa: E402  the harness as a user runs it, in a clean environment
from servers import openai_server  # noqa: E402
from servers.local import FaultPlan  # noqa: E402


def timed(root: Path, archive: Path, plan: FaultPlan | None, *extra: str) -> float:
    with openai_server.serve(plan, slow_s=60) as server:
        started = time.monotonic()
        out = run_cli("--model", "Voxtral-Mini-3B", "--task", "rad", "--archive", str(archive), "--judge", "rules",
                      "--results-dir", str(root / f"results-{time.monotonic_ns()}"), *extra, cwd=root,
                      env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))
        took = time.monotonic() - started
    if out.returncode != 0:
        raise SystemExit(f"the run failed: {out.stderr.strip()}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-canary-"))
    archive = write_noise_pack(root / "archive", "rad", 8)
    keys = {hashlib.sha256(Path(paths[0]).read_bytes()).hexdigest() for _, _, paths, _ in probes()}
    stalling = FaultPlan(by_key={key: ["stall"] * 8 for key in keys})  # the probes stall; the questions are answered
    timed(root, archive, None)  # the probes' clips written to the cache once, as a user's first run does
    for name, plan in (("honest", None), ("probes stalling", stalling)):
        on = statistics.median(timed(root, archive, plan) for _ in range(args.repeats))
        off = statistics.median(timed(root, archive, plan, "--no-canary") for _ in range(args.repeats))
        print(f"{name}: {on:.2f} s with the canary, {off:.2f} s with --no-canary: it adds {on - off:.2f} s")


if __name__ == "__main__":
    main()
