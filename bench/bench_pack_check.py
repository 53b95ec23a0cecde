#!/usr/bin/env python3
"""Benchmark the check a run makes before it trusts a pack (archive/trust.py: the questions files against
MANIFEST.json, each selected question's checksum, the sha256 of its audio) against the Oracle's whole run over all
3,800 questions; target: the check costs at most 5% of that run.

    .venv/bin/python bench/bench_pack_check.py [--archive DIR] [--repeats 5]

Each measurement runs in a fresh process with a cold page cache where the machine allows (else warm, said so)."""
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


def worker(archive: Path, what: str) -> None:
    from acousticbench.benchmarks.acoustic.pack import load_questions
    from acousticbench.benchmarks.acoustic.pack.trust import check_questions
    from acousticbench.run.sweep import run_sweep
    from acousticbench.benchmarks.acoustic.spec import acoustic_spec
    from acousticbench.benchmarks.acoustic.tasks import TASKS

    started = time.perf_counter()
    if what == "check":
        for task in TASKS:
            questions = load_questions(archive, task)
            check_questions(archive, task, questions, questions)
    elif what == "load":
        for task in TASKS:
            load_questions(archive, task)
    else:
        with tempfile.TemporaryDirectory() as results:
            run_sweep([acoustic_spec(model="Oracle", task=t, archive=archive, results_dir=Path(results), judge="rules")
                       for t in TASKS], progress=False)
    print(json.dumps({"seconds": time.perf_counter() - started}))


def measure(archive: Path, what: str, cache: Path | None = None) -> float:
    """Seconds for `what` in a fresh process; with `cache`, the pack check starts from that (empty) record of
    verified files, as on a pack's first check, else from the user's (files verified before are only stat'ed)."""
    subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"], capture_output=True)
    env = {**os.environ, **({"ACOUSTICBENCH_CACHE_DIR": str(cache)} if cache else {})}
    out = subprocess.run([sys.executable, __file__, "--worker", str(archive), what], capture_output=True, text=True,
                         cwd=REPO, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(Path(sys.argv[2]), sys.argv[3])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=REPO / "archive")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    cold = subprocess.run(["sh", "-c", "echo 3 > /proc/sys/vm/drop_caches"], capture_output=True).returncode == 0
    load = statistics.median(measure(args.archive, "load") for _ in range(args.repeats))
    with tempfile.TemporaryDirectory() as empty:
        first = statistics.median(measure(args.archive, "check", Path(tempfile.mkdtemp(dir=empty)))
                                  for _ in range(args.repeats))
    measure(args.archive, "check")  # the user's record now knows this pack
    again = statistics.median(measure(args.archive, "check") for _ in range(args.repeats))
    oracle = statistics.median(measure(args.archive, "oracle") for _ in range(max(1, args.repeats // 2)))
    print(f"page cache: {'dropped before each measurement' if cold else 'warm (cannot drop it here)'}")
    print(f"loading 3,800 questions: {load:.2f} s; the check on top: {first - load:.2f} s on a pack's first check "
          f"(every clip hashed), {again - load:.2f} s after (files unchanged since verified are only stat'ed)")
    print(f"Oracle over all 3,800 questions (the whole run, check included): {oracle:.2f} s; the check is "
          f"{(first - load) / oracle:.1%} of it the first time, {(again - load) / oracle:.1%} after (target <= 5%)")


if __name__ == "__main__":
    main()
