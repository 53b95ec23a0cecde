"""Rival cues: in counting the busier or longer clip is not reliably the one with more events, in tempo the faster
train is not reliably the one with more or longer beats or silences, and the pack's table of rivals reads them from
the audio."""
from __future__ import annotations

import numpy as np
import pytest

from acousticbench.benchmarks.acoustic.shortcuts.rivals import RIVALS, agreements, clip_cues, events, task_rows
from acousticbench.benchmarks.acoustic.stimuli import counting, tempo
from acousticbench.benchmarks.acoustic.stimuli.balance import balanced_pair
from acousticbench.benchmarks.acoustic.stimuli.sources import render_burst
from acousticbench.core.audio import SAMPLE_RATE as SR
from harness_cli import script

# rad's level statistics over the sounding part follow from the decay itself (the tail is the attribute): README
DECAY_ITSELF = {("rad", "envelope_sd_db"), ("rad", "fluctuation_db")}


def test_events_are_read_with_their_lengths_and_gaps():
    """Bursts of 50, 100 and 50 ms at 0.1, 0.4 and 0.9 s: three events, the right span, gaps and lengths."""
    x = 1e-5 * np.random.default_rng(0).standard_normal(SR)
    params = {"event": "tone", "event_hz": 1000.0}
    for start, length in ((0.1, 0.05), (0.4, 0.1), (0.9, 0.05)):
        x[int(start * SR) : int(start * SR) + int(length * SR)] += 0.3 * render_burst(params, int(length * SR), np.random.default_rng(1))
    found = events(x)
    assert len(found) == 3
    assert [round(s, 2) for s, _ in found] == [0.1, 0.4, 0.9]
    cues = clip_cues(x)
    assert cues["count"] == 3 and cues["span_s"] == pytest.approx(0.85, abs=0.01)
    assert cues["event_s"] == pytest.approx(0.2 / 3, abs=0.01) and cues["gap_s"] == pytest.approx(0.325, abs=0.01)


def test_balanced_pairs_stay_in_bounds_and_centre_their_log_ratio():
    rng = np.random.default_rng(2)
    pairs = np.array([balanced_pair(rng, (0.5, 2.5), 0.3) for _ in range(4000)])
    assert pairs.min() >= 0.5 - 1e-9 and pairs.max() <= 2.5 + 1e-9
    ratios = np.log(pairs[:, 0] / pairs[:, 1])
    assert np.median(ratios) == pytest.approx(0.3, abs=0.05) and ratios.min() < -0.8 and ratios.max() > 1.4


def share(hits: list[bool]) -> float:
    return float(np.mean(hits))


@pytest.mark.parametrize("level", range(1, 6))
def test_counting_the_busier_or_longer_clip_is_not_the_one_with_more(level):
    """Number is rate times span: at every level each of rate, span and mean gap points to the clip with more bursts
    about as often as not (never more than 62 % of pairs either way)."""
    step, rng = counting.STEPS[level - 1], np.random.default_rng(level)
    rate, span, gap = [], [], []
    for _ in range(1000):
        fewer, more = counting.PAIRS[step][int(rng.integers(len(counting.PAIRS[step])))]
        plan = counting.pair_plan(rng, fewer, more)
        (s_more, d_more), (s_fewer, d_fewer) = plan[more], plan[fewer]
        rate.append(more / s_more > fewer / s_fewer)
        span.append(s_more > s_fewer)
        gap.append(s_more * (1 - d_more) / (more - 1) < s_fewer * (1 - d_fewer) / (fewer - 1))
    for name, hits in (("rate", rate), ("span", span), ("gap", gap)):
        assert 0.38 < share(hits) < 0.62, (name, share(hits))


@pytest.mark.parametrize("count", range(3, 11))
def test_counting_bursts_and_gaps_spread_alike_for_any_count(count):
    """The longest burst over the mean, and how irregular the gaps are, do not grow with the number of bursts (random
    shares put the count into both: the clip with more intervals was the more irregular one)."""
    starts, lengths, total = counting.burst_plan(np.random.default_rng(count), count, 0.2, 3.0, 0.3)
    lengths = np.array(lengths)
    gaps = np.array(starts[1:]) - (np.array(starts[:-1]) + lengths[:-1]) - counting.MIN_GAP_S
    assert lengths.max() / lengths.mean() == pytest.approx(1 + counting.LENGTH_SPREAD)
    assert gaps.std() / gaps.mean() == pytest.approx(counting.GAP_SPREAD * np.sqrt(1 - (count - 1) % 2 / (count - 1)))


def test_tempo_the_faster_train_has_more_or_longer_beats_or_silences_only_about_half_the_time():
    """At the largest step (20 %), the faster train has more beats, longer ones, and longer silences between them, in
    38-62 % of pairs."""
    more, longer, silence = [], [], []
    for seed in range(300):
        answer = "AB"[seed % 2]
        trial = tempo.trial(np.random.default_rng(seed), tempo.STEPS[0], answer)
        fast, slow = trial.clip_params if answer == "A" else trial.clip_params[::-1]
        more.append(fast["events"] > slow["events"])
        longer.append(fast["duty"] * fast["ioi_s"] > slow["duty"] * slow["ioi_s"])
        silence.append((1 - fast["duty"]) * fast["ioi_s"] > (1 - slow["duty"]) * slow["ioi_s"])
    for name, hits in (("more", more), ("longer", longer), ("silence", silence)):
        assert 0.38 < share(hits) < 0.62, (name, share(hits))


def test_every_rival_of_the_pack_is_near_chance(open_pack):
    """On eval, every task's rival cues point to the key 0.35-0.65 of the time (rad's decay statistics excepted)."""
    for task, cues in RIVALS.items():
        table = agreements(task, task_rows(open_pack, task), list(cues))
        for cue, figures in table.items():
            if (task, cue) not in DECAY_ITSELF:
                assert 0.35 <= figures[0] <= 0.65, (task, cue, figures)


def test_rival_cue_script_prints_the_table(open_pack):
    out = script("bench/rival_cues.py", "--archive", str(open_pack), "--task", "tem", timeout=300)
    assert out.returncode == 0, out.stderr
    assert "| tem | tempo | count (more events) |" in out.stdout and "| tem | tone |" in out.stdout
