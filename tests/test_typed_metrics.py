"""metrics.json is read once, as its benchmark's typed model: files written before later fields still load and read
the same in the leaderboard, and one that does not validate is one line naming it and the way to write it again."""
from __future__ import annotations

import json

from acousticbench.benchmarks.audioicl.record import ICLMetrics, icl_metrics
from acousticbench.tools.leaderboard import collect, markdown
from harness_cli import run_cli, run_dirs

# the fields each model gained after its first release (acoustic: commit 6599f9a; AudioICL: 1b98cbc)
ACOUSTIC_LATER = ("benchmark", "error_causes", "psychometric", "tokens", "price_usd", "price_basis", "listener")
SLICE_LATER = ("n_counts", "accuracy_without_errors", "acc_stderr", "truncated", "errors", "truncation_rate")
ICL_LATER = ("benchmark", "n_counts", "accuracy_public", "accuracy_without_errors", "acc_stderr", "truncated",
             "tokens", "price_usd", "price_basis", "no_answer")


def _first_slice(cell: dict) -> dict:
    return {k: v for k, v in cell.items() if k not in SLICE_LATER}


def _as_first_written(metrics: dict) -> dict:
    """An AcousticBench metrics.json as the first harness wrote it: none of the fields added since."""
    old = {k: v for k, v in metrics.items() if k not in ACOUSTIC_LATER}
    old["scored"] = _first_slice(old["scored"])
    old["by_split"] = {k: _first_slice(v) for k, v in old["by_split"].items()}
    old["by_level"] = {k: _first_slice(v) for k, v in old["by_level"].items()}
    old["diagnostics"] = {k: v for k, v in old["diagnostics"].items() if k != "n_counts"}
    return old


def test_old_metrics_load_and_a_bad_one_is_one_line_naming_the_fix(tiny_pack, tmp_path, capsys):
    args = ("--model", "Random", "--task", "rad", "--archive", str(tiny_pack))
    assert run_cli(*args, cwd=tmp_path).returncode == 0
    (run,) = run_dirs(tmp_path / "results")
    path = run / "metrics.json"
    written = path.read_text()
    table = markdown(collect([tmp_path / "results"]))
    assert "| Random | all |" in table

    path.write_text(json.dumps(_as_first_written(json.loads(written))))
    (entry,) = collect([tmp_path / "results"])
    assert entry.metrics.scored.acc_stderr is None and entry.listener is None  # the defaults of later fields
    assert markdown([entry]) == table  # errors fall back to error_rate x n: the same row

    bad = json.loads(written)
    del bad["scored"]["correct"]
    path.write_text(json.dumps(bad))
    assert collect([tmp_path / "results"]) == []
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (f"skipped: {run}: metrics.json is unreadable as AcousticBench metrics (scored.correct: Field "
                    "required); its answers are intact: run its command again with --resume to write it again (the "
                    "latest run of its model, task and seed)")
    assert "delete" not in line  # derived data, but advice to delete is advice nobody should need

    assert run_cli(*args, "--resume", cwd=tmp_path).returncode == 0  # the fix the line names, with nothing deleted
    assert path.read_text() == written


def test_an_audioicl_metrics_file_from_the_first_release_loads():
    current = icl_metrics([], model="Random", task="count", shots=3, seed=42, prompt_style="default",
                          scoring="strict").model_dump(mode="json")
    old = {k: v for k, v in current.items() if k not in ICL_LATER}
    loaded = ICLMetrics.model_validate_json(json.dumps(old))
    assert loaded.accuracy_public is None and loaded.acc_stderr is None and loaded.truncated == 0
