#!/usr/bin/env python3
"""Validate --adaptive against simulated listeners of known threshold, slope, lapse rate and response bias that hear
the clips themselves (adaptive/listener.py), and compare it with the fixed pack on the same listeners.

Per task: the adaptive threshold's error (median signed and absolute, relative to the truth) and its 95% interval's
coverage over --runs listeners; the fixed pack's threshold on the same listeners, read both by the pack's own fit
(psychometric.py, its posterior interval) and by the adaptive run's own posterior (same prior, same 95% interval);
how many requests the adaptive run needed before its interval was as narrow as each (the pack asks 475); the fewest
requests any procedure could need for the pack's precision (the Cramer-Rao bound: the pack's Fisher information
about the threshold, its slope unknown, over that of one ideally placed trial); the Oracle's
adaptive threshold against the pack's hardest step; and whether a listener that never hears is reported as not
reached. The trials are made by the same code as a run's (adaptive/stimuli.py), quantised to PCM16 as on disk.

    python bench/bench_adaptive.py --archive archive --runs 30 --workers 2 --out adaptive.json
    python bench/bench_adaptive.py --table adaptive.json --at 120,160,180,240
    python bench/bench_adaptive.py --archive archive --bounds 0.1,0.2,0.35,0.5
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from multiprocessing import Pool
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acousticbench.benchmarks.acoustic.adaptive.listener import (Listener, measured_difference,  # noqa: E402
                                                                simulated_run)
from acousticbench.benchmarks.acoustic.adaptive.procedure import estimate_of_counts  # noqa: E402
from acousticbench.benchmarks.acoustic.adaptive.stimuli import (CATCH_EVERY, difference, grid_of,  # noqa: E402
                                                                magnitude_of)
from acousticbench.benchmarks.acoustic.pack import load_questions  # noqa: E402
from acousticbench.benchmarks.acoustic.metrics.psychometric import fit_psychometric, in_units  # noqa: E402
from acousticbench.benchmarks.acoustic.stimuli import ATTRIBUTES  # noqa: E402
from acousticbench.core.audio import SAMPLE_RATE, read_audio  # noqa: E402

PACK_REQUESTS = 475  # a full run of one task of the pack


POPULATIONS = {"span": (0, 4), "middle": (1, 3)}  # the pack's steps (easiest first) between which thresholds lie
SCALES = (0.2, 0.5)  # logistic scales on the log difference: d' growing as the difference to the power 0.58 / scale


def listener_for(code: str, index: int, population: str = "span", scales: tuple[float, float] = SCALES) -> Listener:
    """Listener `index` of a task: threshold log-uniform between two of the pack's steps (`span`: its easiest and its
    hardest, `middle`: its 2nd and 4th), logistic scale uniform within `scales`, lapses on half of them, a response
    bias on every one."""
    rng = np.random.default_rng([7, index])
    steps, (easy, hard) = ATTRIBUTES[code].STEPS, POPULATIONS[population]
    low, high = magnitude_of(code, steps[hard]), magnitude_of(code, steps[easy])
    threshold = difference(code, float(np.exp(rng.uniform(np.log(low), np.log(high)))))
    return Listener(threshold, spread=float(rng.uniform(*scales)), lapse=float(rng.choice([0.0, 0.04])),
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
    """The listener answers every question of the pack; the pack's own fit of its threshold, and the answers as
    magnitude -> (asked, right)."""
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
    answers = {magnitude_of(code, steps[k]): (n, c) for k, (n, c) in counts.items()}
    return fit.threshold_physical, fit.threshold_physical_ci95, answers


def information(code: str, listener: Listener, magnitude: float | np.ndarray) -> np.ndarray:
    """Fisher information of one trial at each `magnitude` about the listener's (log threshold, log scale): an
    array of 2 x 2 matrices (its lapse rate known)."""
    h, truth = 1e-4, magnitude_of(code, listener.threshold)
    magnitude = np.atleast_1d(magnitude)

    def p_correct(log_shift: float, log_scale_shift: float) -> np.ndarray:
        shifted = replace(listener, threshold=difference(code, truth * np.exp(log_shift)),
                          spread=listener.spread * np.exp(log_scale_shift))
        hear = np.array([shifted.p_hear(code, difference(code, m)) for m in magnitude])
        return 0.5 + 0.5 * (1 - listener.lapse) * hear

    p = p_correct(0.0, 0.0)
    slopes = np.stack([(p_correct(h, 0.0) - p_correct(-h, 0.0)) / (2 * h),
                       (p_correct(0.0, h) - p_correct(0.0, -h)) / (2 * h)], axis=-1)
    variance = p * (1 - p)
    weight = np.where(variance > 0, 1 / np.where(variance > 0, variance, 1.0), 0.0)  # a certain answer says nothing
    return weight[:, None, None] * slopes[:, :, None] * slopes[:, None, :]


def fewest_requests(code: str, listener: Listener, answers: dict[float, tuple[int, int]],
                    known: bool = False) -> float:
    """The Cramer-Rao bound on the requests any procedure needs for the pack's precision: the pack's information
    about the threshold, its slope unknown (the pack's fit and an adaptive run both estimate it; `known`: told to
    both), counted in trials placed where one says most about the threshold with the slope known, with a catch trial
    in every CATCH_EVERY as a run has."""
    pack = sum(n * information(code, listener, m)[0] for m, (n, _) in answers.items())
    threshold_only = pack[0, 0] if known else pack[0, 0] - pack[0, 1] ** 2 / pack[1, 1]
    truth = magnitude_of(code, listener.threshold)
    best = float(information(code, listener, truth * np.exp(np.linspace(-2, 2, 401)))[:, 0, 0].max())
    return threshold_only / best * CATCH_EVERY / (CATCH_EVERY - 1)


def bounds_by_spread(archive: str, codes: list[str], spreads: list[float], runs: int, population: str) -> list[str]:
    """Per task, the median over the listeners of the Cramer-Rao bound as a share of the pack's requests, had every
    listener the logistic scale (on the log difference) of each of `spreads` and no lapses: how steep a listener's
    curve must be before the pack's precision could be had in a quarter of its requests."""
    lines = ["| task | " + " | ".join(f"scale {s:g}" for s in spreads) + " |", "|" + "---|" * (len(spreads) + 1)]
    for code in codes:
        asked = Counter(magnitude_of(code, meta["step"]) for level, _, _, meta in pack_differences(archive, code)
                        if level is not None)
        answers = {magnitude: (n, 0) for magnitude, n in asked.items()}  # the bound reads only how many were asked
        cells = [np.median([fewest_requests(code, replace(listener_for(code, i, population), spread=spread, lapse=0.0),
                                            answers) for i in range(runs)]) / PACK_REQUESTS for spread in spreads]
        lines.append(f"| {code} | " + " | ".join(f"{share:.2f}" for share in cells) + " |")
    return lines


def _round_ends(path, tracks: int):
    """The run's estimate at the end of each round, by requests so far (to read a shorter run's error)."""
    return [(n, found) for n, found in path if n % tracks == 0]


def one_listener(job) -> dict:
    archive, code, index, tracks, trials, population, scales, known = job
    listener = listener_for(code, index, population, scales)
    truth = magnitude_of(code, listener.threshold)
    # --known: the run and the pack's reading are told the listener's slope and lapse rate (the run's lapse rate is
    # the share of answers a lapse makes wrong: half of the listener's, who guesses when it lapses)
    grid = replace(grid_of(code), spreads=(listener.spread,), lapses=(listener.lapse / 2,)) if known else grid_of(code)
    final, path, requests = simulated_run(code, 1000 + index, listener, tracks, trials, grid=grid)
    widths = [(n, found.width) for n, found in path]
    fixed, fixed_ci, answers = fixed_run(archive, code, listener, 1000 + index)
    same = estimate_of_counts(grid, answers)  # the pack's answers read as an adaptive run reads its own
    row = {"task": code, "listener": index, "truth": listener.threshold, "spread": listener.spread,
           "lapse": listener.lapse, "bias": listener.bias, "requests": requests,
           "adaptive": difference(code, final.median), "adaptive_ci": [difference(code, final.low),
                                                                       difference(code, final.high)],
           "adaptive_error": final.median / truth - 1, "adaptive_covers": final.low <= truth <= final.high,
           "adaptive_width": final.width, "fixed": fixed, "fixed_ci": fixed_ci,
           "same_error": same.median / truth - 1, "same_covers": same.low <= truth <= same.high,
           "same_width": same.width, "requests_to_same_width": next((n for n, w in widths if w <= same.width), None),
           "fewest_requests": fewest_requests(code, listener, answers, known),
           "at": {n: [found.median / truth - 1, found.low <= truth <= found.high]
                  for n, found in _round_ends(path, tracks)}}
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


def _needed(rows: list[dict], key: str) -> str:
    """Median (and share of the pack's 475) of the requests to a width; 'over N' when half the runs did not."""
    needed = [np.inf if r.get(key) is None else r[key] for r in rows]
    if not needed:
        return "-"
    median = np.median(needed)
    return f"over {rows[0]['requests']}" if not np.isfinite(median) else f"{median:.0f}; {median / PACK_REQUESTS:.2f}"


def shorter_runs(rows: list[dict], requests: list[int]) -> list[str]:
    """Per task, the adaptive error and coverage had the runs stopped after each of `requests`."""
    lines = ["| task | " + " | ".join(f"{n} requests: error signed / abs, coverage" for n in requests) + " |",
             "|" + "---|" * (len(requests) + 1)]
    for code in [c for c in ATTRIBUTES if any(r["task"] == c for r in rows)]:
        cells = []
        for n in requests:
            seen = [r["at"][max((k for k in r["at"] if int(k) <= n), key=int)] for r in rows if r["task"] == code]
            errors = [e for e, _ in seen]
            cells.append(f"{np.median(errors):+.3f} / {np.median(np.abs(errors)):.3f}, "
                         f"{np.mean([c for _, c in seen]):.2f}")
        lines.append(f"| {code} | " + " | ".join(cells) + " |")
    return lines


def summary(rows: list[dict], extreme: list[dict]) -> list[str]:
    """The table per task (markdown) of the runs finished so far."""
    lines = ["| task | listeners | adaptive error, median signed / abs | 95% coverage | requests a run | pack's fit: "
             "error abs / coverage / width | requests to that width (median; share of 475) | pack read as adaptive: "
             "error abs / coverage / width | requests to that width | fewest possible (median; share) | Oracle "
             "(pack's hardest) | never hears |", "|" + "---|" * 12]
    for code in [c for c in ATTRIBUTES if any(r["task"] == c for r in rows)]:
        mine = [r for r in rows if r["task"] == code]
        fixed = [r for r in mine if "fixed_error" in r]
        x = next((e for e in extreme if e["task"] == code), None)
        ends = (f"{x['oracle']:.3g} ({x['pack_hardest']:g}) | "
                f"{'reached' if x['never_hearing_reached'] else 'not reached'}") if x else "- | -"
        fixed_cells = (f"{np.median([abs(r['fixed_error']) for r in fixed]):.3f} / "
                       f"{np.mean([r['fixed_covers'] for r in fixed]):.2f} / "
                       f"{np.median([r['fixed_width'] for r in fixed]):.2f}") if fixed else "-"
        same_cells = (f"{np.median([abs(r['same_error']) for r in mine]):.3f} / "
                      f"{np.mean([r['same_covers'] for r in mine]):.2f} / "
                      f"{np.median([r['same_width'] for r in mine]):.2f}")
        fewest = np.median([r["fewest_requests"] for r in mine])
        lines.append(f"| {code} | {len(mine)} | {np.median([r['adaptive_error'] for r in mine]):+.3f} / "
                     f"{np.median([abs(r['adaptive_error']) for r in mine]):.3f} | "
                     f"{np.mean([r['adaptive_covers'] for r in mine]):.2f} | {mine[0]['requests']} | {fixed_cells} | "
                     f"{_needed(fixed, 'requests_to_fixed_width')} | {same_cells} | "
                     f"{_needed(mine, 'requests_to_same_width')} | {fewest:.0f}; {fewest / PACK_REQUESTS:.2f} | "
                     f"{ends} |")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--archive", default="archive", help="the open pack, for the fixed-pack comparison")
    p.add_argument("--task", default="pit,lou,dur,tem,rad,dir,cnt,bri")
    p.add_argument("--runs", type=int, default=30, help="listeners per task")
    p.add_argument("--tracks", type=int, default=4)
    p.add_argument("--trials", type=int, default=60, help="per track, catch trials included (the harness's default)")
    p.add_argument("--listeners", choices=sorted(POPULATIONS), default="span",
                   help="where the listeners' thresholds lie: anywhere from the pack's hardest step to its easiest "
                   "(span), or between its 2nd and 4th steps (middle), where the pack is most informative")
    p.add_argument("--scales", default=",".join(map(str, SCALES)), metavar="LOW,HIGH",
                   help="the range of the listeners' logistic scales on the log difference (small: steep)")
    p.add_argument("--known", action="store_true", help="tell the adaptive run and the pack's reading by its "
                   "posterior each listener's own slope and lapse rate (the bound then has the slope known to both): "
                   "what is left once the slope need not be learned")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", type=Path, help="every run's figures, a JSON line each as it finishes")
    p.add_argument("--table", type=Path, metavar="OUT", help="only print the table of an --out file (so far)")
    p.add_argument("--at", default="", help="with --table: also the error had the runs stopped after these requests "
                   "(e.g. 120,160)")
    p.add_argument("--bounds", default="", metavar="SCALES", help="only print the median Cramer-Rao bound per task "
                   "(share of the pack's requests) for listeners of these logistic scales (e.g. 0.1,0.2,0.35,0.5)")
    args = p.parse_args()
    if args.bounds:
        print("\n".join(bounds_by_spread(args.archive, args.task.split(","), [float(s) for s in args.bounds.split(",")],
                                         args.runs, args.listeners)))
        return 0
    if args.table:
        lines = [json.loads(line) for line in args.table.read_text().splitlines()]
        print("\n".join(summary([r for r in lines if "listener" in r], [r for r in lines if "oracle" in r])))
        if args.at:
            print("\n" + "\n".join(shorter_runs([r for r in lines if "listener" in r],
                                                [int(n) for n in args.at.split(",")])))
        return 0
    codes = args.task.split(",")
    started = time.perf_counter()
    # listeners first across tasks: a table of every task from the first finished runs on
    jobs = [(one_listener, (args.archive, code, i, args.tracks, args.trials, args.listeners,
                                  tuple(float(v) for v in args.scales.split(",")), args.known))
            for i in range(args.runs) for code in codes]
    jobs = [(extremes, (code, args.tracks, args.trials)) for code in codes] + jobs
    out = args.out.open("w") if args.out else None
    rows: list[dict] = []
    with Pool(args.workers) as pool:
        for row in pool.imap_unordered(call, jobs):
            rows.append(row)
            if out:
                out.write(json.dumps(row) + "\n")
                out.flush()
    print("\n".join(summary([r for r in rows if "listener" in r], [r for r in rows if "oracle" in r])))
    print(f"({args.runs} listeners a task, {args.tracks} tracks x {args.trials} trials, "
          f"{time.perf_counter() - started:.0f} s)")
    return 0


def call(job):
    function, arguments = job
    return function(arguments)


if __name__ == "__main__":
    raise SystemExit(main())
