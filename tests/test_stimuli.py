"""The signal generators: each pair differs in its attribute as its meta says, and in nothing a listener could use instead."""
from __future__ import annotations

import numpy as np
import pytest

from acousticbench.core.audio import SAMPLE_RATE as SR
from acousticbench.benchmarks.acoustic.stimuli import ATTRIBUTES, direction, duration, level, pitch
from acousticbench.benchmarks.acoustic.stimuli.signal import rms, sounding

PAIRED = [code for code in ATTRIBUTES if code != "dir"]
# the meta key that carries the attribute of each clip, and how closely the measurement must recover it


def onset_s(x: np.ndarray) -> float:
    """When the sound starts: the first moment within 20 dB of the loudest one."""
    return sounding(x)[0] / SR


ATTRIBUTE_KEY = {"pit": "f0_hz", "lou": "level_dbfs", "dur": "sound_s", "tem": "bpm", "rad": "rt60_s", "cnt": "events", "bri": "centroid_hz"}
RELATIVE_TOLERANCE = {"pit": 0.002, "lou": 0.001, "dur": 0.03, "tem": 0.01, "rad": 0.2, "cnt": 0.0, "bri": 0.01}


def make(code: str, seed: int, step: float, answer: str = "A"):
    return ATTRIBUTES[code].trial(np.random.default_rng(seed), step, answer)


def all_steps(code: str) -> list[float]:
    return [ATTRIBUTES[code].CATCH_STEP, *ATTRIBUTES[code].STEPS]


@pytest.mark.parametrize("code", PAIRED)
@pytest.mark.parametrize("answer", ["A", "B"])
def test_pair_differs_in_its_attribute_as_meta_says(code, answer):
    module, key = ATTRIBUTES[code], ATTRIBUTE_KEY[code]
    for seed, step in enumerate(all_steps(code)):
        trial = make(code, seed, step, answer)
        first, second = (p[key] for p in trial.clip_params)
        assert (first > second) == (answer == "A"), (step, trial.clip_params)
        for clip, params in zip(trial.clips, trial.clip_params):
            measured, designed = module.measure(clip, SR), params[key]
            if code == "lou":
                measured, designed = 10 ** (measured / 20), 10 ** (designed / 20)
            if code == "tem":
                measured *= 60  # events per second -> beats per minute
            assert measured == pytest.approx(designed, rel=RELATIVE_TOLERANCE[code], abs=0.005 if code == "dur" else 0)


@pytest.mark.parametrize("code", PAIRED)
def test_pair_has_equal_length_and_onset_and_never_clips(code):
    for seed, step in enumerate(all_steps(code) + [0.0]):
        trial = make(code, 100 + seed, step, "AB"[seed % 2])
        one, two = trial.clips
        assert one.shape == two.shape and one.ndim == 1
        if code not in ("tem", "rad", "cnt"):  # tem and cnt rove each clip's onset and span, rad its fade-in (issue 20)
            assert abs(onset_s(one) - onset_s(two)) < 0.003  # same design onset; the measured one wobbles with the phases
        assert max(np.abs(one).max(), np.abs(two).max()) < 0.95  # no clipping at PCM16 quantisation


@pytest.mark.parametrize("code", [code for code in ATTRIBUTES if code != "lou"])
def test_each_clip_has_its_own_level_over_the_whole_rove(code):
    """Level answers only `lou`: every other clip sits at its own level, drawn over ROVE_DB whatever the answer."""
    centre = level.SPARSE_MID_DB if code in ("tem", "rad", "cnt") else level.MID_DB
    mids, gaps = [], []
    for seed in range(24):
        clips = make(code, 400 + seed, ATTRIBUTES[code].STEPS[0], "AB"[seed % 2]).clips
        mids += [level.mid_level_db(clip) for clip in clips]
        gaps.append(mids[-1] - mids[-2] if len(clips) == 2 else 0.0)
        assert all(np.abs(clip).max() < 0.95 for clip in clips)
    assert all(abs(mid - centre) <= level.ROVE_DB / 2 + 0.05 for mid in mids)  # the background adds a hair
    assert max(mids) - min(mids) > 0.6 * level.ROVE_DB
    if code != "dir":
        assert max(np.abs(gaps)) > level.ROVE_DB / 3  # the clips of one pair are roved apart


@pytest.mark.parametrize(
    "code, other, tolerance",
    [
        ("pit", duration.measure, 0.003),  # seconds
        ("lou", duration.measure, 0.003),
        ("bri", duration.measure, 0.003),
        ("bri", pitch.measure, 0.5),  # Hz
        ("lou", pitch.measure, 0.5),
        ("dur", pitch.measure, 0.5),
    ],
)
def test_other_attributes_do_not_follow_the_asked_one(code, other, tolerance):
    for seed in range(6):
        trial = make(code, 200 + seed, ATTRIBUTES[code].STEPS[0], "AB"[seed % 2])
        if trial.shared.get("source", "tone") != "tone" and other is pitch.measure:
            continue  # noise has no pitch to compare
        one, two = (other(clip, SR) for clip in trial.clips)
        assert one == pytest.approx(two, abs=tolerance)


@pytest.mark.parametrize("code", list(ATTRIBUTES))
def test_levels_run_from_obvious_to_subtle(code):
    module = ATTRIBUTES[code]
    assert list(module.STEPS) == sorted(module.STEPS, reverse=True) and len(set(module.STEPS)) == 5
    assert module.CATCH_STEP >= module.STEPS[0]
    for seed in range(4):  # one seed holds every nuisance fixed while the step shrinks
        gaps = []
        for step in module.STEPS:
            values = [module.measure(clip, SR) for clip in make(code, 300 + seed, step).clips]
            if code == "cnt":  # counting difficulty is the ratio of the counts, not their difference
                gaps.append(max(values) / min(values))
            else:
                gaps.append(abs(values[0] - values[1]) if len(values) == 2 else abs(values[0]))
        assert all(a >= b for a, b in zip(gaps, gaps[1:])), gaps


@pytest.mark.parametrize("code", list(ATTRIBUTES))
def test_same_seed_same_samples_and_nuisance_is_roved(code):
    step = ATTRIBUTES[code].STEPS[2]
    a, b, c = make(code, 7, step), make(code, 7, step), make(code, 8, step)
    assert all(np.array_equal(x, y) for x, y in zip(a.clips, b.clips)) and a.shared == b.shared
    assert not np.array_equal(a.clips[0], c.clips[0]) and a.shared != c.shared
    onsets = {make(code, seed, step).shared.get("onset_s") or make(code, seed, step).clip_params[0]["onset_s"]
              for seed in range(8)}  # tem and cnt draw the onset per clip
    assert len(onsets) >= 6  # onset roved (to the millisecond): no fixed template to learn


def test_direction_sides_are_mirrors_with_equal_power():
    left, right = make("dir", 5, 20.0, "A"), make("dir", 5, 20.0, "B")
    np.testing.assert_array_equal(left.clips[0][:, ::-1], right.clips[0])
    assert rms(left.clips[0]) == pytest.approx(rms(right.clips[0]), rel=1e-12)
    assert left.clip_params[0]["side"] == "left" and right.clip_params[0] == direction.mirrored(left.clip_params[0])
    assert direction.measure(left.clips[0], SR) > 0 > direction.measure(right.clips[0], SR)


def test_direction_centred_sound_has_no_interaural_difference():
    stereo = make("dir", 6, 0.0).clips[0]
    np.testing.assert_array_equal(stereo[:, 0], stereo[:, 1])
    assert direction.measure(stereo, SR) == 0.0


def test_direction_cues_match_meta():
    params = make("dir", 9, 8.0).clip_params[0]
    itd, ild = direction.cues(8.0)
    assert params["itd_us"] == pytest.approx(itd * 1e6, abs=1e-3) and params["ild_db"] == pytest.approx(ild, abs=1e-3)
    stereo = make("dir", 9, 8.0).clips[0]
    measured_itd = direction.interaural_delay(stereo[:, 0], stereo[:, 1], SR)
    assert measured_itd == pytest.approx(itd, abs=5e-6)
