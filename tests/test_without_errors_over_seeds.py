"""The leaderboard's 'w/o errors' figure is the mean over every seed of the cell, errors left out where a seed had
them, never the mean of the seeds that had errors alone."""
from __future__ import annotations

from pathlib import Path

from acousticbench.benchmarks.entry import Entry
from acousticbench.core.stats import without_errors
from acousticbench.core.tables import cell_text


def seed(number: int, accuracy: float, error_rate: float) -> Entry:
    return Entry(benchmark="acousticbench", model="M", task="rad", facets=(("split", "test"),), manifest="m", seed=number,
                 max_samples=None, n=400, accuracy=accuracy, parse_failure_rate=0.0, error_rate=error_rate,
                 accuracy_without_errors=accuracy / (1 - error_rate), run_dir=Path("/nonexistent"))


def test_w_o_errors_averages_every_seed_with_seeds_without_errors_at_their_own_accuracy():
    cell = [seed(42, 0.17, 0.1), seed(43, 0.19, 0.0), seed(44, 0.19, 0.0)]
    clean = without_errors(cell)
    assert round(100 * clean, 1) == 19.0  # (18.9 + 19.0 + 19.0) / 3; the errored seed alone read 18.9
    assert cell_text((0.1833, 0.01), None, clean).endswith("(w/o errors 19.0)")


def test_no_w_o_errors_figure_where_no_seed_had_errors_and_a_seed_of_only_errors_has_none_to_give():
    assert without_errors([seed(42, 0.5, 0.0), seed(43, 0.6, 0.0)]) is None
    failed = Entry(benchmark="acousticbench", model="M", task="rad", facets=(("split", "test"),), manifest="m", seed=44,
                   max_samples=None, n=400, accuracy=0.0, parse_failure_rate=0.0, error_rate=1.0,
                   accuracy_without_errors=None)
    assert without_errors([seed(42, 0.5, 0.0), failed]) == 0.5
