"""Settings from the environment that no run can use: each is one line naming the variable, exit 2, before anything
is asked or written; never a traceback from deep inside the run."""
from __future__ import annotations

import pytest

from conftest import write_tiny_pack
from harness_cli import assert_one_line, harness_env, run_cli

BAD = {  # variable=value -> the model it reaches
    "a port past 65535": ("ACOUSTICBENCH_HUMAN_PORT", "70000", "Human"),
    "a fractional port": ("ACOUSTICBENCH_HUMAN_PORT", "8080.5", "Human"),
    "a gap of ages": ("ACOUSTICBENCH_HUMAN_GAP_S", "1e300", "Human"),
    "an unclosed quote in the sbatch options": ("ACOUSTICBENCH_SBATCH_OPTIONS", '--time "8:00:00', "Voxtral-Mini-3B"),
    "an unclosed quote in the server command": ("ACOUSTICBENCH_SLURM_SERVER_COMMAND", "python -c 'x",
                                                "Voxtral-Mini-3B"),
    "an infinite connect wait": ("ACOUSTICBENCH_CONNECT_WAIT", "inf", "Voxtral-Mini-3B"),
    "a NaN concurrency ceiling": ("ACOUSTICBENCH_MAX_CONCURRENCY", "nan", "Voxtral-Mini-3B"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_environment_value_is_one_line_naming_it(case, tmp_path):
    variable, value, model = BAD[case]
    archive = write_tiny_pack(tmp_path / "archive")
    serve = ["--serve", "slurm"] if variable.startswith(("ACOUSTICBENCH_SBATCH", "ACOUSTICBENCH_SLURM")) else []
    endpoint = {} if serve or model == "Human" else {"ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT": "http://127.0.0.1:9"}
    out = run_cli("--model", model, "--task", "rad", "--judge", "rules", "--archive", str(archive), *serve,
                  cwd=tmp_path, env=harness_env(**{variable: value, **endpoint}), timeout=60)
    assert_one_line(out, 2, variable)
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
