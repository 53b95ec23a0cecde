#!/usr/bin/env python3
"""Time a full build of the open AcousticBench pack and print the median of --repeat runs."""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acousticbench.benchmarks.acoustic.pack.build import build_open_pack  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="number of full builds (default 3)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    args = parser.parse_args()
    times, digests = [], set()
    for run in range(1, args.repeat + 1):
        with tempfile.TemporaryDirectory(prefix="bench_build-") as tmp:
            start = time.perf_counter()
            digests.add(build_open_pack(Path(tmp) / "archive", workers=args.workers))
            times.append(time.perf_counter() - start)
            size = sum(p.stat().st_size for p in (Path(tmp) / "archive").rglob("*") if p.is_file())
            shutil.rmtree(Path(tmp) / "archive")
        print(f"run {run}: {times[-1]:.1f} s, {size / 1e6:.0f} MB")
    print(f"median build time over {args.repeat} runs: {statistics.median(times):.1f} s")
    print(f"manifest sha256: {', '.join(sorted(digests))}" + ("" if len(digests) == 1 else "  (runs differ: not deterministic!)"))
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
