"""Small cells (a level's 80 questions, a run of the first 20) get Clopper-Pearson's exact interval, which covers a
simulated listener's true accuracy (servers/listener.py) at 95% or more where Wilson's falls short; from 100 questions
up they get Wilson's."""
from __future__ import annotations

import pytest

from acousticbench.core.stats import SMALL_N, cell_interval, clopper_pearson, interval_method, wilson_interval
from servers.listener import Listener, Question

REPEATS = 1000
EASY = Question("A", 1)


def coverage(knows: float, n: int) -> tuple[float, float, float]:
    """(true accuracy, share of repeats the cell's interval covered it, share Wilson's did) over REPEATS cells of n
    questions of one level, each answered once by a fresh listener that hears the difference with chance `knows`."""
    truth = Listener("truth", knows=(knows,) * 5).p_right(EASY)
    ours = wilsons = 0
    for repeat in range(REPEATS):
        listener = Listener(f"small-{knows}-{n}-{repeat}", knows=(knows,) * 5, consistency=0.0)
        right = sum(listener.right(f"q{i}", EASY, (42,))[0] for i in range(n))
        ours += cell_interval(right, n).low <= truth <= cell_interval(right, n).high
        wilsons += wilson_interval(right, n).low <= truth <= wilson_interval(right, n).high
    return truth, ours / REPEATS, wilsons / REPEATS


@pytest.mark.slow  # a coverage study over thousands of simulated cells; the intervals themselves are checked in the inner loop
def test_small_cells_cover_the_true_accuracy_at_95_percent_or_more_where_wilson_does_not():
    wilson_short = []
    for knows, n in ((0.9, 20), (0.9, 80), (0.6, 40), (0.98, 40)):  # true accuracy 0.95, 0.95, 0.80, 0.99
        assert interval_method(n) == "clopper-pearson"
        truth, ours, wilsons = coverage(knows, n)
        assert ours >= 0.94, f"accuracy {truth:.3f}, {n} questions: covered in {ours:.1%} of {REPEATS}"
        wilson_short.append(wilsons)
    assert min(wilson_short) < 0.935  # the simulation has teeth: Wilson's interval falls short in these cells


def test_clopper_pearson_matches_the_textbook_case_and_large_cells_keep_wilson():
    exact = clopper_pearson(8, 10)
    assert (exact.low, exact.high) == pytest.approx((0.4439, 0.9748), abs=1e-4)
    assert clopper_pearson(0, 10).low == 0.0 and clopper_pearson(10, 10).high == 1.0
    assert clopper_pearson(3, 0) is None
    assert interval_method(SMALL_N) == "wilson" and cell_interval(200, 400) == wilson_interval(200, 400)


def test_the_exact_interval_is_scipys_beta_quantiles_at_fractional_sizes_too():
    from scipy.special import betaincinv  # the reference; the harness computes it without scipy

    for k, n in ((7.5, 12.3), (0.3, 2.1), (40, 41.7), (1, 99)):
        exact = clopper_pearson(k, n)
        assert exact.low == pytest.approx(betaincinv(k, n - k + 1, 0.025), abs=1e-12)
        assert exact.high == pytest.approx(betaincinv(k + 1, n - k, 0.975), abs=1e-12)
