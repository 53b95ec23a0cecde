"""Metrics over records: the numbers a paper table quotes."""
from __future__ import annotations

import pytest

from acousticbench.benchmarks.acoustic.metrics import compute_metrics
from acousticbench.core.stats import wilson_interval
from acousticbench.benchmarks.acoustic.records import JudgeInfo, Record


def record(i: int, chosen, answer="A", status="answered", kind="scored", split="train", **meta) -> Record:
    return Record(
        id=f"rad_{i:04d}", task="rad", split=split, kind=kind, model="M", seed=42, prompt="p", audio=[],
        response=chosen, chosen=chosen, answer=answer,
        correct=None if answer is None else chosen == answer, status=status, judge=JudgeInfo(method="rules"),
        meta={"level": meta.get("level", 1), "probe": meta.get("probe"), "twin_of": meta.get("twin_of")},
    )


def test_wilson_interval_matches_the_textbook_case():
    interval = wilson_interval(8, 10)
    assert interval.low == pytest.approx(0.4902, abs=1e-4)
    assert interval.high == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 0) is None
    assert wilson_interval(10, 10).high == pytest.approx(1.0)


def test_null_answers_count_as_wrong_but_are_reported():
    records = [record(1, "A"), record(2, "A"), record(3, None, status="unparsed"), record(4, None, status="error")]
    m = compute_metrics(records, "M", "rad", 42).scored
    assert (m.n, m.correct, m.accuracy, m.accuracy_answered) == (4, 2, 0.5, 1.0)
    assert (m.parse_failure_rate, m.error_rate, m.refusal_rate) == (0.25, 0.25, 0.0)


def test_levels_splits_and_diagnostics():
    records = [
        record(1, "A", level=1), record(2, "B", answer="B", level=2, split="eval"),
        record(3, "B", answer="A", level=2, split="eval"),
        record(10, "A", kind="diagnostic", probe="catch"),
        record(11, "A", answer=None, kind="diagnostic", probe="identical"),
        record(12, "B", answer=None, kind="diagnostic", probe="identical"),
        record(13, "A", answer=None, kind="diagnostic", probe="identical"),
        record(14, "B", answer="B", kind="diagnostic", probe="swap", twin_of="rad_0001"),  # flipped: consistent
        record(15, "B", answer="A", kind="diagnostic", probe="swap", twin_of="rad_0002"),  # same label: not
    ]
    m = compute_metrics(records, "M", "rad", 42)
    assert m.scored.n == 3  # diagnostics never enter accuracy
    assert m.by_level["2"].accuracy == 0.5 and m.by_split["eval"].n == 2
    d = m.diagnostics
    assert (d.n_catch, d.catch_accuracy) == (1, 1.0)
    assert d.identical_p_a == pytest.approx(2 / 3)
    assert (d.n_swap_pairs, d.swap_consistency) == (2, 0.5)
    assert m.judge_methods == {"rules": 9}
