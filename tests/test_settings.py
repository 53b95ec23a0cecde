"""The harness's settings are declared once (core/settings.py) and each benchmark's in its options object: every
declared field is a flag of run.py and of `acousticbench run`, a keyword of acousticbench.evaluate, and (where it
describes a run) a field of config.json's spec; so a new setting is one field, in one module."""
from __future__ import annotations

import json

import pytest

from acousticbench.api import options_types
from acousticbench.cli import build_parser
from acousticbench.cli.subcommands import console_parser
from acousticbench.core.errors import UserError
from acousticbench.core.settings import RunSettings, flag_of, per_run_fields, validated
from harness_cli import run_cli, run_dirs


def declared() -> list[tuple[type, str]]:
    models = [RunSettings, *options_types().values()]
    return [(m, name) for m in models for name, f in m.model_fields.items() if (f.json_schema_extra or {})]


def test_every_declared_setting_is_a_flag_of_both_command_lines():
    run_py = build_parser().format_help()
    run_sub = console_parser()._subparsers._group_actions[0].choices["run"].format_help()
    for model, name in declared():
        assert flag_of(model, name) in run_py and flag_of(model, name) in run_sub, (model.__name__, name)


def test_every_declared_setting_is_a_keyword_of_evaluate_and_nothing_else_is(tiny_pack, tmp_path):
    import acousticbench

    with pytest.raises(TypeError) as err:
        acousticbench.evaluate(model="Oracle", task="rad", archive=tiny_pack, colour="red")
    for _, name in declared():
        assert name in str(err.value)
    assert not (tmp_path / "results").exists()


def test_a_bad_value_is_one_line_naming_its_flag():
    with pytest.raises(UserError, match=r"^--max-samples: must be 1 or more, got 0$"):
        validated(RunSettings, {"max_samples": 0})
    with pytest.raises(UserError, match=r"^--max-error-rate must be between 0 and 1, got 2.0.$"):
        validated(RunSettings, {"max_error_rate": 2})
    with pytest.raises(UserError, match=r"^--seeds: 'x' is not a comma list"):
        validated(RunSettings, {"seeds": "x"})


def test_config_json_records_every_per_run_setting(tiny_pack, tmp_path):
    out = run_cli("--model", "Oracle", "--task", "rad", "--archive", str(tiny_pack), "--max-samples", "2",
                  "--judge", "rules", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (run_dir,) = run_dirs(tmp_path / "results")
    spec = json.loads((run_dir / "config.json").read_text())["spec"]
    assert set(per_run_fields(RunSettings)) <= set(spec) and spec["max_samples"] == 2 and spec["judge"] == "rules"
