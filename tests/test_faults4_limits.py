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
from harness_cli import REPO, harness_env, run_dirs
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
