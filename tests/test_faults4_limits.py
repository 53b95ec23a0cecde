"""Resource limits of the machine a run is given: a low open-files limit bounds how many requests are in flight (never
"Too many open files" on every request), and a full disk is one line and an exit code, with every answer written
before it kept and a resume that continues from them."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest

from conftest import write_tiny_pack
from harness_cli import REPO, harness_env, run_cli, run_dirs
from servers import openai_server
from servers.fixtures import records
from test_faults import VARIABLE


FILES = 40  # under what --concurrency auto starts at (32) and its files


def limited_run(tmp_path, files: int, *flags: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """run.py with its open-files limit (soft and hard) at `files`, as `ulimit -n` sets it in a shell."""
    command = f"ulimit -n {files} && exec {shlex.quote(sys.executable)} {REPO / 'run.py'} " + shlex.join(flags)
    return subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("concurrency", [[], ["--concurrency", "auto"], ["--concurrency", "500"]],
                         ids=["default auto", "auto", "fixed 500"])
def test_a_low_open_files_limit_bounds_the_requests_in_flight(concurrency, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 120)
    with openai_server.serve(delay_s=0.3) as server:  # slow enough that auto grows past 32 in flight
        out = limited_run(tmp_path, FILES, "--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules",
                          "--archive", str(archive), *concurrency, env=harness_env(**{VARIABLE: server.url}))
        asked = [r for r in server.received if r.path == "/v1/chat/completions"]
    assert "Traceback" not in out.stderr and "Too many open files" not in out.stderr + out.stdout, out.stderr[-2000:]
    assert out.returncode == 0, out.stderr[-2000:]
    (run_dir,) = run_dirs(tmp_path / "results")
    rows = records(run_dir)
    assert len(rows) == 123 and {r["status"] for r in rows} == {"answered"}, {r["error"] for r in rows}
    assert len(asked) == 123  # each question asked once: none failed for want of a file
    if concurrency[-1:] == ["500"]:
        assert "open-files limit" in out.stderr and "ulimit -n" in out.stderr, out.stderr


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs at tmp_path/disk (root only), nearly filled: what is left holds a few records."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", str(disk)],
                                                   capture_output=True).returncode == 0
    if not mounted:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def fill(disk, leave: int) -> None:
    stat = os.statvfs(disk)
    (disk / "ballast").write_bytes(b"\0" * max(0, stat.f_bavail * stat.f_frsize - leave))


@pytest.mark.parametrize("leave", [24_000, 4_000], ids=["room for a few records", "room for the config alone"])
def test_a_full_disk_is_one_line_and_a_resume_loses_nothing(leave, small_disk, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 40)
    results = small_disk / "results"
    flags = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--archive", str(archive),
             "--results-dir", str(results))
    fill(small_disk, leave)
    with openai_server.serve() as server:
        env = harness_env(**{VARIABLE: server.url})
        out = run_cli(*flags, cwd=tmp_path, env=env)
        assert out.returncode not in (0, 1) and "Traceback" not in out.stderr, out.stderr[-3000:]
        assert "no space left" in out.stderr.lower() and str(small_disk) in out.stderr, out.stderr[-3000:]
        kept = {}
        for run_dir in run_dirs(results):  # every line written is a whole record
            if (run_dir / "responses.jsonl").exists():
                kept = {r["id"]: r for r in records(run_dir)}
        (small_disk / "ballast").unlink()
        again = run_cli(*flags, "--resume", cwd=tmp_path, env=env)
        asked = [r.key for r in server.received if r.path == "/v1/chat/completions"]
    assert again.returncode == 0, again.stderr[-3000:]
    (run_dir,) = run_dirs(results)
    rows = records(run_dir)
    assert sorted(r["id"] for r in rows) == sorted({r["id"] for r in rows}) and len(rows) == 43
    assert {r["status"] for r in rows} == {"answered"}
    by_id = {r["id"]: r for r in rows}
    assert all(by_id[i] == r for i, r in kept.items())  # an answer written before the disk filled is kept as it was
    assert len(asked) - len(set(asked)) <= 43 - len(kept)  # only what was never written is asked again
