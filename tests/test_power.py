"""The power figure (core/power.py) against a simulated listener of known truth (servers/listener.py): a true
difference of the size the paired view calls detectable at 80% power is found in about 80% of repeats, the plan's
assumed spread of per-question differences is the one such listeners show when given their accuracy, discordance and
seed agreement, and `--dry-run` prints the figure with what it assumes."""
from __future__ import annotations

import pytest

import re
import statistics

from acousticbench.core.power import Assumptions, detectable_difference
from acousticbench.core.significance import pair_questions, paired_difference
from conftest import write_tiny_pack
from harness_cli import run_cli
from servers.listener import Listener, Question, uniform
from test_model_against_model import FLAWS, SEEDS, answers, drawn_questions, true_difference

REPEATS = 400
TARGET = 0.124  # the true difference tried: what the paired view calls detectable for such runs (200 questions)


def weaker(name: str, by: float) -> Listener:
    """A listener whose truth is `by` below FLAWS' (more refusals, which are never right): P(right) is linear in them."""
    per_refusal = true_difference(Listener("x", **FLAWS), Listener("y", **{**FLAWS, "refusal": FLAWS["refusal"] + 0.01}))
    return Listener(name, **{**FLAWS, "refusal": FLAWS["refusal"] + 0.01 * by / per_refusal})


@pytest.mark.slow  # a power study over hundreds of simulated pairs; the plan and paired lines stay in the inner loop
def test_a_true_difference_of_the_detectable_size_is_found_about_80_percent_of_the_time():
    found, detectable = 0, []
    for repeat in range(REPEATS):
        questions = drawn_questions(repeat)
        a, b = Listener(f"strong{repeat}", **FLAWS), weaker(f"weak{repeat}", TARGET)
        result = paired_difference(pair_questions(answers(a, questions), answers(b, questions)).counts)
        found += result.p_value < 0.05
        detectable.append(result.detectable)
    # what the paired view printed for these runs is the difference they had, and that difference was found ~80%
    assert abs(statistics.median(detectable) - TARGET) < 0.01, statistics.median(detectable)
    # the exact sign-flip test is a little conservative: 77% in 1,000 repeats
    assert 0.70 <= found / REPEATS <= 0.88, f"found in {found} of {REPEATS}"


def test_the_plans_assumed_spread_is_the_one_listeners_show_given_their_accuracy_discordance_and_agreement():
    questions = {f"q{i}": Question("A" if uniform(i, "answer") < 0.5 else "B", 1 + int(5 * uniform(i, "level")))
                 for i in range(3000)}
    a, b = answers(Listener("plan-a", **FLAWS), questions), answers(Listener("plan-b", **FLAWS), questions)
    every = [right for side in (a, b) for by_seed in side.values() for right in by_seed.values()]
    accuracy = statistics.fmean(every)
    discordance = statistics.fmean(a[q][s] != b[q][s] for q in questions for s in SEEDS)
    within = statistics.fmean(statistics.variance(by_seed.values()) for side in (a, b) for by_seed in side.values())
    assumed = Assumptions(accuracy, discordance, seed_agreement=1 - within / (accuracy * (1 - accuracy)))
    for seeds in (1, 3):
        used = SEEDS[:seeds]
        seen = statistics.stdev(statistics.fmean(a[q][s] for s in used) - statistics.fmean(b[q][s] for s in used)
                                for q in questions)
        assert abs(assumed.difference_sd(seeds) - seen) < 0.02 * seen, (seeds, assumed.difference_sd(seeds), seen)


def test_the_dry_run_plan_says_what_difference_its_questions_and_seeds_can_detect_and_what_it_assumes(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 40)
    out = run_cli("--model", "Oracle,Random", "--task", "rad", "--seeds", "42,43,44", "--archive", str(archive),
                  "--dry-run", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    expected = 100 * detectable_difference(40, Assumptions().difference_sd(3))
    line = re.search(r"rad: with 40 questions and 3 seeds, a difference of ([\d.]+) points is detectable at 80% power "
                     r"\(alpha 0.05, paired by question\)", out.stdout)
    assert line and float(line.group(1)) == round(expected, 1), out.stdout[-800:]
    assert "assumes both models near 70% accuracy, disagreeing on 42% of questions with one seed each" in out.stdout
    assert not (tmp_path / "results").exists()  # a plan writes nothing
