#!/usr/bin/env python3
"""Validate --adaptive against simulated listeners of known threshold, slope, lapse rate and response bias that hear
the clips themselves (adaptive/listener.py), and compare it with the fixed pack on the same listeners.

Per task: the adaptive threshold's error (median signed and absolute, relative to the truth) and its 95% interval's
coverage over --runs listeners; the fixed pack's threshold (psychometric.py) on the same listeners; how many requests
the adaptive run needed before its interval was as narrow as the fixed pack's (the pack asks 475); the Oracle's
adaptive threshold against the pack's hardest step; and whether a listener that never hears is reported as not
reached. The trials are made by the same code as a run's (adaptive/stimuli.py), quantised to PCM16 as on disk.

    python bench/bench_adaptive.py --archive archive --runs 30 --workers 2 --out adaptive.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from functools import lru_cache
from multiprocessing import Pool
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acousticbench.benchmarks.acoustic.adaptive.listener import Listener, measured_difference, simulated_run  # noqa: E402
from acousticbench.benchmarks.acoustic.adaptive.stimuli import difference, grid_of, magnitude_of  # noqa: E402
from acousticbench.benchmarks.acoustic.pack import load_questions  # noqa: E402
from acousticbench.benchmarks.acoustic.psychometric import fit_psychometric, in_units  # noqa: E402
from acousticbench.benchmarks.acoustic.stimuli import ATTRIBUTES  # noqa: E402
from acousticbench.core.audio import SAMPLE_RATE, read_audio  # noqa: E402

PACK_REQUESTS = 475  # a full run of one task of the pack


def listener_for(code: str, index: int) -> Listener:
    """Listener `index` of a task: threshold log-uniform between the pack's 2nd and 4th steps, varied slope, lapses
    on half of them, a response bias on every one."""
    rng = np.random.default_rng([7, index])
    steps = ATTRIBUTES[code].STEPS
    low, high = magnitude_of(code, steps[3]), magnitude_of(code, steps[1])
    threshold = difference(code, float(np.exp(rng.uniform(np.log(low), np.log(high)))))
    return Listener(threshold, spread=float(rng.uniform(0.2, 0.5)), lapse=float(rng.choice([0.0, 0.04])),
                    bias=float(rng.uniform(0.35, 0.65)))


@lru_cache(maxsize=None)
def pack_differences(archive: str, code: str) -> list[tuple[int | None, str | None, float, dict]]:
    """(level, answer, measured difference, meta) of every question of the task in the pack."""
    out = []
    for q in load_questions(Path(archive), code):
        clips = [read_audio(Path(archive) / rel, sr=SAMPLE_RATE)[0] for rel in q.audio]
        out.append((q.meta.get("level") if q.kind == "scored" else None, q.answer, measured_difference(code, clips),
                    q.meta))
    return out


def fixed_run(archive: str, code: str, listener: Listener, seed: int):
    """The listener answers every question of the pack; the pack's own fit of its threshold."""
    counts: dict[int, list[int]] = {}
    steps: dict[int, float] = {}
    for i, (level, answer, measured, meta) in enumerate(pack_differences(archive, code)):
        rng = np.random.default_rng([seed, i, 77])
        p_correct = listener.p_hear(code, measured)
        heard_it = rng.random() >= listener.lapse and rng.random() < p_correct
        chosen = (("A" if measured > 0 else "B") if heard_it and measured else
                  ("A" if rng.random() < listener.bias else "B"))
        if level is not None:
            cell = counts.setdefault(level, [0, 0])
            cell[0] += 1
            cell[1] += chosen == answer
            steps[level] = meta["step"]
    fit = in_units(fit_psychometric({k: (n, c) for k, (n, c) in counts.items()}), steps, ATTRIBUTES[code].UNIT)
    return fit.threshold_physical, fit.threshold_physical_ci95


def one_listener(job) -> dict:
    archive, code, index, tracks, trials = job
    listener = listener_for(code, index)
    truth = magnitude_of(code, listener.threshold)
    final, widths, requests = simulated_run(code, 1000 + index, listener, tracks, trials)
    fixed, fixed_ci = fixed_run(archive, code, listener, 1000 + index)
    row = {"task": code, "listener": index, "truth": listener.threshold, "spread": listener.spread,
           "lapse": listener.lapse, "bias": listener.bias, "requests": requests,
           "adaptive": difference(code, final.median), "adaptive_ci": [difference(code, final.low),
                                                                       difference(code, final.high)],
           "adaptive_error": final.median / truth - 1, "adaptive_covers": final.low <= truth <= final.high,
           "adaptive_width": final.width, "fixed": fixed, "fixed_ci": fixed_ci}
    if fixed_ci and fixed is not None:
        low, high = (magnitude_of(code, v) for v in fixed_ci)
        row.update(fixed_error=magnitude_of(code, fixed) / truth - 1, fixed_covers=low <= truth <= high,
                   fixed_width=high / low)
        row["requests_to_fixed_width"] = next((n for n, w in widths if w <= high / low), None)
    return row


def extremes(job) -> dict:
    """The Oracle and a listener that never hears, on one task."""
    code, tracks, trials = job
    oracle, _, _ = simulated_run(code, 1, None, tracks, trials)
    deaf, _, _ = simulated_run(code, 2, Listener(None, bias=0.6), tracks, trials)
    grid = grid_of(code)
    return {"task": code, "oracle": difference(code, oracle.median), "oracle_high": difference(code, oracle.high),
            "pack_hardest": ATTRIBUTES[code].STEPS[-1],
            "never_hearing_reached": difference(code, deaf.median) <= difference(code, grid.stimuli[-1])}


def summary(rows: list[dict], extreme: list[dict]) -> list[str]:
    lines = ["| task | runs | adaptive median error (signed / abs) | 95% coverage | requests | fixed median error "
             "(abs) | fixed coverage | fixed width (hi/lo) | requests to the fixed width (median, max) | share of "
             "475 | Oracle (pack's hardest) | never hears |", "|" + "---|" * 12]
    for code in dict.fromkeys(r["task"] for r in rows):
        mine = [r for r in rows if r["task"] == code]
        x = next(e for e in extreme if e["task"] == code)
        fixed = [r for r in mine if "fixed_error" in r]
        needed = [r["requests_to_fixed_width"] for r in fixed]
        reached = [n for n in needed if n is not None]
        need = (f"{np.median([n if n is not None else np.inf for n in needed]):.0f}, "
                f"{max(reached) if len(reached) == len(needed) else 'not within the run'}") if needed else "-"
        share = f"{np.median([n if n is not None else np.inf for n in needed]) / PACK_REQUESTS:.2f}" if needed else "-"
        lines.append(
            f"| {code} | {len(mine)} | {np.median([r['adaptive_error'] for r in mine]):+.3f} / "
            f"{np.median([abs(r['adaptive_error']) for r in mine]):.3f} | "
            f"{np.mean([r['adaptive_covers'] for r in mine]):.2f} | {mine[0]['requests']} | "
            f"{np.median([abs(r['fixed_error']) for r in fixed]):.3f} | {np.mean([r['fixed_covers'] for r in fixed]):.2f} | "
            f"{np.median([r['fixed_width'] for r in fixed]):.2f} | {need} | {share} | "
            f"{x['oracle']:.3g} ({x['pack_hardest']:g}) | {'reached' if x['never_hearing_reached'] else 'not reached'} |")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--archive", default="archive", help="the open pack, for the fixed-pack comparison")
    p.add_argument("--task", default="pit,lou,dur,tem,rad,dir,cnt,bri")
    p.add_argument("--runs", type=int, default=30, help="listeners per task")
    p.add_argument("--tracks", type=int, default=4)
    p.add_argument("--trials", type=int, default=45, help="per track, catch trials included")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", type=Path, help="write every run's figures here (JSON)")
    args = p.parse_args()
    codes = args.task.split(",")
    started = time.perf_counter()
    jobs = [(args.archive, code, i, args.tracks, args.trials) for code in codes for i in range(args.runs)]
    with Pool(args.workers) as pool:
        rows = pool.map(one_listener, jobs, chunksize=1)
        extreme = pool.map(extremes, [(code, args.tracks, args.trials) for code in codes], chunksize=1)
    lines = summary(rows, extreme)
    print("\n".join(lines))
    print(f"({args.runs} listeners a task, {args.tracks} tracks x {args.trials} trials, "
          f"{time.perf_counter() - started:.0f} s)")
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "extremes": extreme, "table": lines}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
