"""Signals on a loaded machine: SIGTERM while the LLM judge reads and then a Ctrl-C, at gaps from none to a while,
leave the sweep file and the run folder marked interrupted, every answer kept once, exit 143; the race the third
matrix found left the sweep file "running" in 3 of 6 tries beside a CPU hog."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from harness_cli import REPO, harness_env, run_dirs
from test_signals import sweep_file


@pytest.mark.parametrize("gap_s", [0.0, 0.005, 0.05, 0.3])
def test_sigterm_while_the_judge_reads_then_ctrl_c_leaves_everything_marked_interrupted(gap_s, tiny_pack, tmp_path):
    from servers.judge_server import JudgeServer, verdict

    def slow(request):
        time.sleep(1)
        return verdict("A")

    env = harness_env(ACOUSTICBENCH_CACHE_DIR=str(tmp_path / "cache"))
    results = tmp_path / "results"
    with JudgeServer(default=slow) as judge:
        proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), "--model", "Always-A", "--task", "rad",
                                 "--archive", str(tiny_pack), "--judge", "llm", "--judge-endpoint", judge.url],
                                cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (len(judge.requests) >= 2 and list(results.glob("*/config.json"))):
            time.sleep(0.01)  # past the judge's probe: its folder is open and the judge reads an answer
        proc.send_signal(signal.SIGTERM)
        time.sleep(gap_s)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    # signals pending at once (no gap, or a loaded machine that ran nothing of the run in between) are handled in
    # signal-number order, SIGINT's first: either is the code of a signal that stopped it
    assert proc.returncode in (130, 143), err
    assert "Traceback" not in err and "--resume" in err, err
    state = sweep_file(results)
    assert state["state"] == "interrupted" and state["finished_at"], state
    (run_dir,) = run_dirs(results)
    config = json.loads((run_dir / "config.json").read_text())
    assert "interrupted_at" in config and "finished_at" not in config
    assert not list(run_dir.glob("*.tmp"))
    ids = [json.loads(line)["id"] for line in (run_dir / "responses.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids))
