"""Resource limits of the machine a run is given: a low open-files limit bounds how many requests are in flight (never
"Too many open files" on every request); a memory limit (`ulimit -v`) too low to start is one line, and one reached
mid-run too; a full disk is one line and an exit code, with every answer written before it kept and a resume that
continues from them."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import write_tiny_pack
from harness_cli import REPO, assert_one_line, harness_env, run_cli, run_dirs, start_cli
from servers import openai_server
from servers.fixtures import records
from test_faults import VARIABLE


FILES = 40  # under what --concurrency auto starts at (32) and its files


def limited_run(tmp_path, files: int, *flags: str, env: dict | None = None, limit: str = "-n",
                entry: tuple[str, ...] = ("run.py",)) -> subprocess.CompletedProcess:
    """run.py (or `entry`: "-m", "acousticbench", "run") with a limit (soft and hard) as `ulimit` sets it in a shell:
    by default its open-files limit at `files`."""
    program = [str(REPO / entry[0]) if entry[0].endswith(".py") else entry[0], *entry[1:]]
    command = f"ulimit {limit} {files} && exec {shlex.quote(sys.executable)} " + shlex.join([*program, *flags])
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


ORACLE = ("--model", "Oracle", "--task", "rad", "--judge", "rules")
TOO_LOW_KB = 300_000  # what numpy with OpenBLAS, the harness and a run's threads need is more; here it aborted from C


@pytest.mark.parametrize("entry", [("run.py",), ("-m", "acousticbench", "run")], ids=["run.py", "acousticbench run"])
def test_a_memory_limit_too_low_to_start_is_one_line_naming_it_and_writes_nothing(entry, tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 20)
    out = limited_run(tmp_path, TOO_LOW_KB, *ORACLE, "--archive", str(archive), limit="-v", entry=entry,
                      env=harness_env())
    assert_one_line(out, 2, f"memory limit (ulimit -v) of {TOO_LOW_KB >> 10} MB", "ulimit -v unlimited")
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("model", ["Oracle", "Voxtral-Mini-3B"])
def test_a_run_under_the_memory_limit_the_harness_asks_for_finishes(model, tmp_path):
    """The line's advice holds: at the limit it names (numpy's BLAS on one thread, its buffer taken at the start), a
    run of a local and of a served model finishes with every answer."""
    archive = write_tiny_pack(tmp_path / "archive", "rad", 60)
    flags = ("--model", model, "--task", "rad", "--judge", "rules", "--archive", str(archive))
    with openai_server.serve(delay_s=0.02) as server:
        env = harness_env(**{VARIABLE: server.url})
        asked = limited_run(tmp_path, TOO_LOW_KB, *flags, limit="-v", env=env)
        (need_kb,) = map(int, re.findall(r"ulimit -v (\d+)", asked.stderr))
        out = limited_run(tmp_path, need_kb, *flags, limit="-v", env=env)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout[-1000:] + out.stderr[-3000:]
    (run_dir,) = run_dirs(tmp_path / "results")
    assert len(records(run_dir)) == 63 and {r["status"] for r in records(run_dir)} == {"answered"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="lowers a running process's limit (prlimit, /proc)")
def test_a_memory_limit_reached_mid_run_is_one_line_and_resume_finishes(tmp_path):
    """The limit lowered under a running run to what it maps already (as a cgroup or an admin's prlimit may): its next
    thread cannot start. One line naming the limit, exit 2, every record written whole, and --resume finishes with
    each question once; before, a traceback (or the run's questions each an error record)."""
    import resource

    archive = write_tiny_pack(tmp_path / "archive", "rad", 60)
    flags = (*ORACLE, "--archive", str(archive), "--concurrency", "2")
    proc = start_cli(*flags, cwd=tmp_path, env=harness_env(PYTHONFAULTHANDLER="1"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and not (
            (found := list((tmp_path / "results").glob("*/responses.jsonl")))
            and len(found[0].read_bytes().splitlines()) >= 5):
        time.sleep(0.01)
    status = (Path("/proc") / str(proc.pid) / "status").read_text()
    mapped = int(re.search(r"VmSize:\s+(\d+) kB", status).group(1)) << 10
    resource.prlimit(proc.pid, resource.RLIMIT_AS, (mapped + (1 << 20), resource.RLIM_INFINITY))
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.send_signal(6)  # faulthandler prints where each thread waits
        pytest.fail("the run hung at its memory limit:\n" + proc.communicate(timeout=30)[1][-4000:])
    assert_one_line(subprocess.CompletedProcess(proc.args, proc.returncode, out, err), 2,
                    "out of memory", "memory limit (ulimit -v)", "--resume")
    (run_dir,) = run_dirs(tmp_path / "results")
    kept = {r["id"]: r for r in map(json.loads, (run_dir / "responses.jsonl").read_text().splitlines())}
    assert len(kept) >= 5 and {r["status"] for r in kept.values()} == {"answered"}
    again = run_cli(*flags, "--resume", cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    rows = records(run_dir)
    assert sorted(r["id"] for r in rows) == sorted({r["id"] for r in rows}) and len(rows) == 63
    assert all({r["id"]: r for r in rows}[i] == r for i, r in kept.items())


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
