#!/usr/bin/env python3
"""Time full builds of the open AudioICL pack (alone and with the AcousticBench pack), check they are byte-identical,
and score the Oracle on every task at k = 1..5 through the engine."""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acousticbench.benchmarks.acoustic.pack.build import build_open_pack  # noqa: E402
from acousticbench.benchmarks.audioicl import SHOTS, TASKS  # noqa: E402
from acousticbench.benchmarks.audioicl.build import build_audioicl  # noqa: E402
from acousticbench.benchmarks.audioicl.pack import OPEN_MANIFEST_SHA256  # noqa: E402


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def timed_build(archive: Path, workers: int | None, with_acousticbench: bool) -> tuple[float, str]:
    start = time.perf_counter()
    if with_acousticbench:
        build_open_pack(archive, workers=workers)
    digest = build_audioicl(archive, workers=workers)
    return time.perf_counter() - start, digest


def oracle_table(archive: Path, results: Path) -> dict[tuple[str, int], float]:
    from acousticbench.benchmarks.audioicl.spec import icl_spec
    from acousticbench.run.sweep import run_sweep

    accuracy: dict[tuple[str, int], float] = {}
    specs = [icl_spec(model="Oracle", task=t, shots=k, archive=archive, results_dir=results) for t in TASKS for k in SHOTS]
    run_sweep(specs, on_result=lambda r: accuracy.__setitem__((r.spec.task, r.spec.variant), r.metrics.accuracy), progress=False)
    return accuracy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--skip-acousticbench", action="store_true", help="do not time the build of both packs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_audioicl-") as tmp:
        tmp = Path(tmp)
        seconds, first = timed_build(tmp / "a", args.workers, False)
        pinned = "the published pack" if first == OPEN_MANIFEST_SHA256 else "NOT the published pack (see pack.pinned_note)"
        print(f"AudioICL pack alone: {seconds:.1f} s, {size_mb(tmp / 'a' / 'audioicl'):.0f} MB, manifest sha256 {first}: {pinned}")
        seconds, again = timed_build(tmp / "b", args.workers, False)
        same = "byte-identical" if again == first else "DIFFERENT: not deterministic!"
        print(f"AudioICL pack again: {seconds:.1f} s, {same}")
        shutil.rmtree(tmp / "b")
        if not args.skip_acousticbench:
            seconds, both = timed_build(tmp / "c", args.workers, True)
            print(f"AcousticBench + AudioICL packs (--build-archive): {seconds:.1f} s, {size_mb(tmp / 'c'):.0f} MB"
                  f"{'' if both == first else ' (AudioICL manifest differs!)'}")
            shutil.rmtree(tmp / "c")
        start = time.perf_counter()
        accuracy = oracle_table(tmp / "a", tmp / "results")
        print(f"Oracle on {len(TASKS)} tasks x k = 1..5 ({time.perf_counter() - start:.0f} s):")
        print(f"{'task':<18}" + "".join(f"  k={k:<5}" for k in SHOTS))
        for task in TASKS:
            print(f"{task:<18}" + "".join(f"  {accuracy[(task, k)]:.3f}  " for k in SHOTS))
        low = [f"{t} k={k}" for (t, k), a in accuracy.items() if k == 3 and a < 0.95]
        print("Oracle >= 0.95 on every task at k = 3" if not low else f"Oracle below 0.95 at k = 3: {', '.join(low)}")
        return 0 if again == first and not low else 1


if __name__ == "__main__":
    sys.exit(main())
