"""Runs are ordered and chosen by instants, never by the text of a local time: two runs made under different time
zones (TZ) are told apart by when they really happened, in the leaderboard, --resume and a control's real run; the
times an older harness wrote with a local offset are still read."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import write_tiny_pack
from harness_cli import harness_env, python, run_cli, run_dirs
from servers.fixtures import records
from test_faults import RUN

EAST, WEST = "Etc/GMT-14", "Etc/GMT+12"  # UTC+14 and UTC-12: a local clock 26 hours apart


def run_in(tmp_path: Path, zone: str, *flags: str):
    archive = tmp_path / "archive"
    if not archive.is_dir():
        write_tiny_pack(archive)
    out = run_cli(*RUN, "--archive", str(archive), *flags, cwd=tmp_path, env=harness_env(TZ=zone))
    assert out.returncode == 0, out.stderr
    return out


def leaderboard(tmp_path: Path):
    return python("-m", "acousticbench", "leaderboard", "results", cwd=tmp_path, env=harness_env(TZ="UTC"))


def test_the_leaderboard_counts_the_run_that_finished_last_across_time_zones(tmp_path):
    run_in(tmp_path, EAST)
    (older,) = run_dirs(tmp_path / "results")
    run_in(tmp_path, WEST)
    (newer,) = [p for p in run_dirs(tmp_path / "results") if p != older]
    out = leaderboard(tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"note: results/{older.name} is an earlier run" in out.stderr and f"way as results/{newer.name}" in \
        out.stderr, out.stderr


def test_the_leaderboard_reads_the_local_offsets_older_runs_wrote_as_instants(tmp_path):
    run_in(tmp_path, "UTC")
    run_in(tmp_path, "UTC")
    first, second = run_dirs(tmp_path / "results")
    for folder, finished in ((first, "2026-01-01T20:00:00+1400"), (second, "2026-01-01T10:00:00-1200")):
        config = json.loads((folder / "config.json").read_text())  # 06:00 and 22:00 UTC, as text the other way round
        (folder / "config.json").write_text(json.dumps({**config, "finished_at": finished}))
    out = leaderboard(tmp_path)
    assert f"note: results/{first.name} is an earlier run" in out.stderr, out.stderr


def test_resume_continues_the_interrupted_run_not_an_older_finished_one_made_in_another_time_zone(tmp_path):
    run_in(tmp_path, EAST)
    (finished,) = run_dirs(tmp_path / "results")
    run_in(tmp_path, WEST)
    (stopped,) = [p for p in run_dirs(tmp_path / "results") if p != finished]
    path = stopped / "responses.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:3]))
    (stopped / "metrics.json").unlink()
    out = run_in(tmp_path, "UTC", "--resume")
    assert "3 kept from the earlier run" in out.stdout and str(stopped.name) in out.stdout, out.stdout
    assert len(records(stopped)) == 11 and (stopped / "metrics.json").is_file()


def test_a_control_names_the_real_run_made_beside_it_not_an_older_one_from_another_time_zone(tmp_path):
    run_in(tmp_path, EAST)
    (older,) = run_dirs(tmp_path / "results")
    run_in(tmp_path, WEST, "--control", "silence")
    control = next(p for p in run_dirs(tmp_path / "results") if "-control-silence-" in p.name)
    real = next(p for p in run_dirs(tmp_path / "results") if p not in (older, control))
    assert json.loads((control / "config.json").read_text())["control"]["real_run"] == real.name


def test_run_times_are_written_as_utc_instants_whatever_the_local_zone(tmp_path):
    run_in(tmp_path, EAST)
    (run_dir,) = run_dirs(tmp_path / "results")
    config = json.loads((run_dir / "config.json").read_text())
    assert config["started_at"].endswith("+00:00") and config["finished_at"].endswith("+00:00"), config


def test_the_plan_measures_latency_over_the_latest_runs_by_instant_not_by_folder_name(tmp_path):
    run_in(tmp_path, EAST)
    (oldest,) = run_dirs(tmp_path / "results")
    for seed in ("43", "44", "45"):
        run_in(tmp_path, WEST, "--seed", seed)
    out = run_cli(*RUN, "--archive", str(tmp_path / "archive"), "--dry-run", cwd=tmp_path, env=harness_env(TZ="UTC"))
    assert out.returncode == 0 and "measured over 33 answers" in out.stdout, out.stdout
    assert oldest.name not in out.stdout, out.stdout
