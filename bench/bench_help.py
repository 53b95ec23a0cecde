#!/usr/bin/env python3
"""Benchmark: wall time of `python run.py --help` (target: median under 0.3 s)."""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, str(REPO / "run.py"), "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    median = statistics.median(times)
    print(f"run.py --help: median {median * 1000:.0f} ms over {args.repeat} runs (min {min(times) * 1000:.0f} ms, "
          f"max {max(times) * 1000:.0f} ms); target < 300 ms: {'OK' if median < 0.3 else 'MISSED'}")
    return 0 if median < 0.3 else 1


if __name__ == "__main__":
    sys.exit(main())
