"""The Python API's types: a value of the wrong type is one line naming its setting, before anything runs; never
quietly turned into another value (seeds=[42.5] into seed 42, seeds=[True] into seed 1, max_error_rate=True into
1.0) and never an exception from inside the settings' own code."""
from __future__ import annotations

import pytest

import acousticbench
from acousticbench.core.errors import UserError

WRONG = {  # setting -> a value of the wrong type, and what the line must name
    "a fractional seed": ({"seeds": [42.5]}, "--seeds"),
    "a boolean seed": ({"seeds": [True]}, "--seeds"),
    "a boolean seed alone": ({"seeds": True}, "--seeds"),
    "a seed of None in the list": ({"seeds": [42, None]}, "--seeds"),
    "a boolean error rate": ({"max_error_rate": True}, "--max-error-rate"),
    "a boolean error rate of False": ({"max_error_rate": False}, "--max-error-rate"),
    "a boolean shot count": ({"shot_counts": True}, "--shots"),
    "a fractional shot count": ({"shot_counts": [2.5]}, "--shots"),
    "a shot count alone as a float": ({"shot_counts": 3.0}, "--shots"),
}


@pytest.mark.parametrize("case", list(WRONG))
def test_a_setting_of_the_wrong_type_is_one_line_naming_it_and_nothing_runs(case, tiny_pack, tmp_path):
    given, flag = WRONG[case]
    task = "AudioCount" if "shot_counts" in given else "rad"
    with pytest.raises(UserError) as raised:
        acousticbench.evaluate(model="Oracle", task=task, archive=tiny_pack, results_dir=tmp_path / "results",
                               progress=False, **given)
    line = str(raised.value)
    assert flag in line and "\n" not in line, line
    assert not (tmp_path / "results").exists()


def test_whole_numbers_given_as_text_or_numbers_still_run(tiny_pack, tmp_path):
    """The other side: 42 and '43' are whole numbers, as the command line's text is."""
    result = acousticbench.evaluate(model="Oracle", task="rad", seeds=[42, "43"], archive=tiny_pack,
                                    results_dir=tmp_path / "results", progress=False, max_samples=2)
    assert result.status == 0 and [r.seed for r in result] == [42, 43]
