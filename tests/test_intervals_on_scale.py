"""Intervals and detectable differences stay on the scale of accuracy: the paired interval (Newcombe's score interval,
core/significance.py) never leaves [-100, +100] points over a grid of questions and accuracies, covers the true
difference near its nominal 95%, and every table and line that shows a detectable difference says 'none' where not even
100 points would be found (the paired view, the report's data, compare, the plan)."""
from __future__ import annotations

import re

import numpy as np

from acousticbench.core.power import Assumptions, detectable_difference, detectable_text, power_line
from acousticbench.core.significance import pair_questions, paired_difference, paired_interval
from acousticbench.tools.model_grid import grid_tests, markdown, to_csv
from conftest import write_tiny_pack
from harness_cli import run_cli

SIZES = (5, 6, 8, 12, 20, 35, 60, 100, 200, 400)
ACCURACIES = (0.0, 0.05, 0.2, 0.5, 0.8, 0.95, 1.0)


def one_seed(n: int, acc_a: float, acc_b: float, pattern: str) -> tuple[dict, dict]:
    """Two sides' answers to n questions at the given accuracies, A's right ones lined up with B's right ones
    ('same'), against them ('opposite'), or spread ('spread')."""
    right_a, right_b = round(acc_a * n), round(acc_b * n)
    a = [i < right_a for i in range(n)]
    order = {"same": range(n), "opposite": range(n - 1, -1, -1), "spread": [(7 * i) % n for i in range(n)]}[pattern]
    b = [False] * n
    for i in list(order)[:right_b]:
        b[i] = True
    return ({f"q{i}": {42: a[i]} for i in range(n)}, {f"q{i}": {42: b[i]} for i in range(n)})


def numbers_in_points(text: str) -> list[float]:
    """Every signed figure inside brackets ('[+69.1, +110.9]') and every 'N points' of a printed text."""
    found = [float(x) for pair in re.findall(r"\[([+-][\d.]+), ([+-][\d.]+)\]", text) for x in pair]
    return found + [float(x) for x in re.findall(r"([\d.]+) points", text)]


def test_no_paired_interval_or_detectable_difference_leaves_the_scale_over_a_grid_of_sizes_and_accuracies():
    for n in SIZES:
        for acc_a in ACCURACIES:
            for acc_b in ACCURACIES:
                for pattern in ("same", "opposite", "spread"):
                    a, b = one_seed(n, acc_a, acc_b, pattern)
                    result = paired_difference(pair_questions(a, b).counts)
                    low, high = result.interval.low, result.interval.high
                    assert -1 <= low <= result.difference <= high <= 1, (n, acc_a, acc_b, pattern, result.interval)
                    shown = detectable_text(result.detectable, n)
                    assert shown in ("-", f"none with n={n}") or 0 <= float(shown) <= 100, (n, shown)
                    line = power_line(n, 1, result.detectable)
                    assert all(-100 <= x <= 100 for x in numbers_in_points(line)), line


def test_with_seeds_averaged_no_interval_or_detectable_difference_leaves_the_scale():
    rng = np.random.default_rng(44)  # a seeded grid: questions, accuracies and how far seeds agree drawn at random
    for n in SIZES:
        for acc_a in ACCURACIES:
            for acc_b in ACCURACIES:
                seeds = int(rng.integers(2, 6))
                a = rng.binomial(seeds, acc_a, size=n)
                b = rng.binomial(seeds, np.clip(acc_b + rng.normal(0, 0.2, size=n), 0, 1))
                result = paired_difference([(int(x), seeds, int(y), seeds) for x, y in zip(a, b)])
                assert -1 <= result.interval.low <= result.difference <= result.interval.high <= 1, (n, seeds)
                line = power_line(n, seeds, result.detectable)
                assert all(-100 <= x <= 100 for x in numbers_in_points(line)), line


def test_the_paired_views_table_and_csv_stay_on_the_scale_at_small_n():
    """The kind that overshot: 10 questions, A right on 9 that B missed (Student's t gave +90.0 [+67.4, +112.6])."""
    a = {f"q{i}": {42: i < 9} for i in range(10)}
    b = {f"q{i}": {42: False} for i in range(10)}
    tests = grid_tests({("A", "rad"): a, ("B", "rad"): b})
    table = markdown(tests)
    row = table.splitlines()[2]
    low, high = (float(x) for x in re.search(r"\+90\.0 \[([+-][\d.]+), ([+-][\d.]+)\]", row).groups())
    assert 40 < low < 90 < high <= 100, row
    a = {f"q{i}": {42: right} for i, right in enumerate((True, True, True, False, False))}
    b = {f"q{i}": {42: right} for i, right in enumerate((False, False, True, True, False))}
    few = grid_tests({("A", "rad"): a, ("B", "rad"): b})
    assert few[0].result.detectable > 1  # what the table used to print as '139.1
    assert "none with n=5" in markdown(few)
    assert to_csv(few).splitlines()[1].endswith(",")  # no detectable share past 1 in the CSV either


def test_the_paired_interval_covers_the_true_difference_near_95_percent():
    rng = np.random.default_rng(20260)
    covered = 0
    draws = 2000
    for n, acc_a, acc_b, rho in [(40, 0.7, 0.55, 0.3), (15, 0.8, 0.6, 0.2)] * (draws // 2):
        both = acc_a * acc_b + rho * np.sqrt(acc_a * (1 - acc_a) * acc_b * (1 - acc_b))
        cells = rng.multinomial(n, [both, acc_a - both, acc_b - both, 1 - acc_a - acc_b + both])
        counts = [(1, 1, 1, 1)] * cells[0] + [(1, 1, 0, 1)] * cells[1] + [(0, 1, 1, 1)] * cells[2] + \
            [(0, 1, 0, 1)] * cells[3]
        interval = paired_interval(counts)
        covered += interval.low <= acc_a - acc_b <= interval.high
    assert 0.93 <= covered / draws <= 0.975, covered / draws


def test_with_seeds_averaged_the_interval_is_newcombes_at_one_seed_and_stays_on_the_scale():
    """Newcombe 1998's worked example (Fagerland et al. 2014: -0.507 to -0.026), and averaged seeds at the extremes."""
    table = [(1, 1, 1, 1)] * 1 + [(1, 1, 0, 1)] * 1 + [(0, 1, 1, 1)] * 7 + [(0, 1, 0, 1)] * 12
    interval = paired_interval(table)
    assert (round(interval.low, 3), round(interval.high, 3)) == (-0.507, -0.026)
    for counts in ([(3, 3, 0, 3)] * 5, [(2, 3, 0, 3)] * 5, [(0, 3, 3, 3)] * 6, [(1, 2, 1, 2)] * 5):
        interval = paired_interval(counts)
        assert -1 <= interval.low <= interval.high <= 1, (counts, interval)


def test_the_plan_says_no_difference_is_detectable_with_too_few_questions(tmp_path):
    assert detectable_difference(5, Assumptions().difference_sd(1)) > 1  # the figure that used to be printed
    archive = write_tiny_pack(tmp_path / "archive", "rad", 5)
    out = run_cli("--model", "Oracle", "--task", "rad", "--seed", "42", "--archive", str(archive), "--dry-run",
                  cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "rad: with 5 questions and 1 seed, no difference is detectable at 80% power" in out.stdout, out.stdout[-600:]
    assert all(-100 <= x <= 100 for x in numbers_in_points(out.stdout)), out.stdout[-600:]
