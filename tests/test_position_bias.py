"""The position-bias figure measures bias, not ability: simulated listeners of known truth (servers/listener.py) answer
order-swapped pairs (a question and its twin with the clips the other way round, so the other answer), and
metrics.json's `position_p_a` reads their guessing bias whatever they hear, where swap consistency moves with what
they hear."""
from __future__ import annotations

import pytest

from acousticbench.benchmarks.acoustic.metrics import compute_metrics
from acousticbench.benchmarks.acoustic.records import JudgeInfo, Record
from servers.listener import Listener, Question, uniform

PAIRS = 400


def record(number: int, listener: Listener, q: Question, probe: str | None, twin_of: str | None) -> Record:
    kind, label = listener.reply(f"rad_{number:04d}", q, 42)
    status = {"answer": "answered", "refusal": "refused", "cutoff": "truncated"}[kind]
    return Record(id=f"rad_{number:04d}", task="rad", split="train", kind="diagnostic" if probe else "scored",
                  model=listener.name, seed=42, prompt="p", audio=[], response=label, chosen=label, answer=q.answer,
                  correct=label == q.answer, status=status, judge=JudgeInfo(method="rules"),
                  meta={"level": q.level, "probe": probe, "twin_of": twin_of})


def swapped_pairs(listener: Listener) -> list[Record]:
    """PAIRS scored questions (answer and level drawn evenly) and their order-swapped twins, as the listener answers."""
    out = []
    for i in range(1, PAIRS + 1):
        original = Question("A" if uniform("pair", i, "answer") < 0.5 else "B", 1 + int(5 * uniform("pair", i, "level")))
        twin = Question("B" if original.answer == "A" else "A", original.level)
        out += [record(i, listener, original, None, None),
                record(PAIRS + i, listener, twin, "swap", f"rad_{i:04d}")]
    return out


def diagnostics_of(name: str, **truth):
    return compute_metrics(swapped_pairs(Listener(name, **truth)), name, "rad", 42).diagnostics


@pytest.mark.parametrize("bias_a", [0.5, 0.7])
def test_position_bias_reads_the_guessing_bias_whatever_the_listener_hears(bias_a):
    poor = diagnostics_of(f"poor-{bias_a}", knows=(0.3,) * 5, bias_a=bias_a, refusal=0.03)
    keen = diagnostics_of(f"keen-{bias_a}", knows=(0.9, 0.8, 0.7, 0.6, 0.5), bias_a=bias_a, refusal=0.03)
    for d in (poor, keen):
        assert d.position_p_a == pytest.approx(bias_a, abs=0.06), d
        assert d.n_position_wrong > 60  # what it is over: wrong answers, enough for the tolerance above
    assert keen.swap_consistency - poor.swap_consistency > 0.15  # consistency follows ability: not a bias figure


def test_an_unbiased_and_a_70_percent_a_guesser_are_told_apart_by_position_bias():
    plain = diagnostics_of("plain", knows=(0.4,) * 5)
    leaning = diagnostics_of("leaning", knows=(0.4,) * 5, bias_a=0.7)
    assert leaning.position_p_a - plain.position_p_a > 0.12
