"""A sweep as its user sees it: one sweep-*.json naming every cell (also after a kill), acc_stderr in metrics.json,
run.log in every run folder, summary lines printed whole above the bars on a terminal, and the AudioICL baselines
answering in each task's label space (Random near chance, Majority the demos' most common label)."""
from __future__ import annotations

import fcntl
import json
import math
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import time
from collections import Counter
from pathlib import Path

import pytest

from audioicl_pack import reduced_pack
from conftest import write_tiny_pack
from harness_cli import REPO, assert_one_line, harness_env, run_cli, run_dirs, start_cli
from servers import openai_server
from servers.fixtures import question_keys
from servers.local import FaultPlan

VARIABLE = "ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT"
SERVED = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--concurrency", "1")


def sweep_file(results: Path) -> dict:
    (path,) = results.glob("sweep-*.json")
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def icl_sweep(tmp_path_factory) -> Path:
    """Random and Majority on 2 AudioICL tasks x 2 seeds at k = 3 (8 cells), in one command."""
    root = tmp_path_factory.mktemp("icl_sweep")
    out = run_cli("--model", "Random,Majority", "--task", "AudioCount,AnomalyDetect", "--shots", "3", "--seeds",
                  "42,43", "--archive", str(reduced_pack()), cwd=root)
    assert out.returncode == 0, out.stderr
    return root / "results"


@pytest.mark.slow  # the reduced AudioICL pack's build (shared per process) and an 8-run sweep
def test_a_sweep_writes_one_file_naming_every_cell(icl_sweep):
    sweep = sweep_file(icl_sweep)
    cells = sweep["cells"]
    assert {(c["model"], c["task"], c["shots"], c["seed"]) for c in cells} == {
        (m, t, 3, s) for m in ("Random", "Majority") for t in ("AudioCount", "AnomalyDetect") for s in (42, 43)}
    assert sweep["state"] == "finished" and "--model Random,Majority" in sweep["command"]
    assert sweep["table"].startswith("Sweep: 8 runs, 8 finished, 0 failed")
    for cell in cells:
        metrics = json.loads((icl_sweep / cell["folder"] / "metrics.json").read_text())
        assert cell["status"] == "done" and cell["benchmark"] == "AudioICL" and cell["n"] == 20
        assert (cell["accuracy"], cell["stderr"]) == (metrics["accuracy"], metrics["acc_stderr"])
        p = metrics["accuracy"]
        assert metrics["acc_stderr"] == pytest.approx(math.sqrt(p * (1 - p) / 20))


def _demo_labels(episode: dict) -> list[str]:
    """The labels an episode's demos show, in the order the prompt shows them (read from the meta file here)."""
    shown = []
    for demo in episode["demos"]:
        shown += [demo["label"]] if "audio_path" in demo else [c["label"] for c in demo["clips"] if c.get("label")]
    return [str(label) for label in shown]


@pytest.mark.slow
def test_majority_answers_the_demos_most_common_label_first_shown_on_a_tie(icl_sweep):
    meta = reduced_pack() / "audioicl" / "meta" / "meta_k3.jsonl"
    episodes = {e["id"]: e for e in map(json.loads, meta.read_text().splitlines())}
    for folder in icl_sweep.glob("Majority-*"):
        for record in map(json.loads, (folder / "responses.jsonl").read_text().splitlines()):
            labels = _demo_labels({**episodes[record["id"]], "demos": episodes[record["id"]]["demos"][:3]})
            top = max(Counter(labels).values())
            assert record["response"] == next(label for label in labels if labels.count(label) == top)
    # AnomalyDetect's demos show Normal then Anomalous, a tie every time: Normal, half right on the balanced queries
    runs = [json.loads(p.read_text()) for p in icl_sweep.glob("Majority-AnomalyDetect-*/metrics.json")]
    assert [m["accuracy"] for m in runs] == [0.5, 0.5]


def test_random_answers_the_task_labels_near_chance_over_the_pack(tmp_path):
    """Random on all nine tasks of the reduced pack: every answer is a label of its task, and the correct count is
    within 3 standard deviations of chance (the sum over episodes of 1 / the size of its label space)."""
    from acousticbench.benchmarks.audioicl import TASKS
    from acousticbench.benchmarks.audioicl.spec import icl_spec
    from acousticbench.run.cells import prepare_cells
    from acousticbench.run.sweep import run_sweep

    specs = [icl_spec(model="Random", task=t, shots=1, archive=reduced_pack(), results_dir=tmp_path) for t in TASKS]
    spaces = {item.id: prompt.answer_space for cell in prepare_cells(specs) for item, prompt in cell.prepared.items}
    assert spaces["AudioICL00001"] == [str(n) for n in range(1, 9)]  # AudioCount: the open pack's counts 1..8
    assert spaces["AudioICL02401"] == ["Anomalous", "Normal"]
    records = [r for result in run_sweep(specs, progress=False) for r in result.records]
    assert len(records) == 180 and all(r.response in spaces[r.id] and r.gt in spaces[r.id] for r in records)
    chance = [1 / len(spaces[r.id]) for r in records]
    spread = math.sqrt(sum(p * (1 - p) for p in chance))
    assert abs(sum(r.correct for r in records) - sum(chance)) <= 3 * spread
    assert sum(r.correct for r in records) > 0  # before: "A" to every episode, 0 where chance is not


def test_majority_on_a_task_without_demos_is_one_line(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive")
    out = run_cli("--model", "Majority", "--task", "rad", "--archive", str(archive), cwd=tmp_path)
    assert_one_line(out, 2, "Majority answers the most common label of an episode's demos", "rad_0001")
    assert not (tmp_path / "results").exists()


def run_in_pty(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 120) -> tuple[int, str]:
    """argv with stdout and stderr on a pseudo-terminal 160 columns wide: what a user's terminal receives."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return proc.wait(timeout=10), b"".join(chunks).decode("utf-8", "replace")


ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_on_a_terminal_bars_are_labelled_and_lines_whole_and_failures_in_run_log(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 8)
    keys = question_keys(archive)
    plan = FaultPlan(by_key={keys["rad_0002"]: ["500", "400"] * 2})  # each seed's rad_0002: 500, then 400 for good
    with openai_server.serve(plan) as server:
        rc, screen = run_in_pty([sys.executable, str(REPO / "run.py"), *SERVED, "--seeds", "1,2", "--archive",
                                 str(archive)], tmp_path, harness_env(**{VARIABLE: server.url}))
    assert rc == 0, screen
    pieces = [p.strip() for line in ESCAPES.sub("", screen).split("\n") for p in line.split("\r")]
    for seed in (1, 2):  # each summary line arrives whole, never after a bar on the same line
        assert any(re.fullmatch(rf"Voxtral-Mini-3B on rad \(seed {seed}\): accuracy .* errors -> \S+", p)
                   for p in pieces), screen
    assert not [p for p in pieces if "q/s" in p and "accuracy" in p]
    # the errors so far: one per run, so 1 or (when the bar was next drawn after both) 2
    assert any(p.startswith("Voxtral-Mini-3B:") and "rad (seed " in p and re.search(r"\b[12] errors?\b", p)
               for p in pieces), screen
    for run_dir in run_dirs(tmp_path / "results"):
        log = (run_dir / "run.log").read_text()
        assert "started: Voxtral-Mini-3B on rad (seed" in log and "settings: {" in log and "finished: " in log
        assert re.search(r"rad_0002: attempt 1 failed: .*HTTP 500.*; asking again in", log), log
        assert re.search(r"rad_0002: failed after 2 attempt\(s\): .*HTTP 400", log), log
        metrics = json.loads((run_dir / "metrics.json").read_text())["scored"]
        p, n = metrics["accuracy"], metrics["n"]
        assert metrics["acc_stderr"] == pytest.approx(math.sqrt(p * (1 - p) / n))
    assert [c["errors"] for c in sweep_file(tmp_path / "results")["cells"]] == [1, 1]


def test_a_killed_sweep_leaves_a_file_naming_what_finished(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 8)
    with openai_server.serve(delay_s=0.1) as server:  # one at a time: 11 questions, about 1.1 s per run
        proc = start_cli(*SERVED, "--seeds", "1,2,3", "--archive", str(archive), cwd=tmp_path,
                         env=harness_env(**{VARIABLE: server.url}))
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                files = list((tmp_path / "results").glob("sweep-*.json"))
                text = files[0].read_text() if files else ""  # empty for the instant between its claim and first write
                if text and any(c["status"] == "done" for c in json.loads(text)["cells"]):
                    break
                time.sleep(0.02)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.communicate(timeout=30)
    sweep = sweep_file(tmp_path / "results")
    statuses = [c["status"] for c in sweep["cells"]]
    # the runs share one queue, so any of them may finish first; the last seed cannot have finished before a kill
    # that came as soon as one had
    assert sweep["state"] == "running" and "done" in statuses and statuses[-1] == "pending", statuses
    done = next(c for c in sweep["cells"] if c["status"] == "done")
    assert (tmp_path / "results" / done["folder"] / "metrics.json").is_file()


def test_two_sweeps_in_the_same_second_get_their_own_files(tmp_path):
    from acousticbench.run.sweepfile import claim_path

    names = {claim_path(tmp_path).name for _ in range(3)}
    assert len(names) == 3 and all(re.fullmatch(r"sweep-\d{8}-\d{6}(-\d)?\.json", n) for n in names)


def test_two_runs_of_one_model_in_the_same_second_get_their_own_folders(tmp_path):
    from acousticbench.run.results import latest_run_dir, new_run_dir

    made = [new_run_dir(tmp_path / "results", "Oracle-rad-local-seed42") for _ in range(3)]
    assert len(set(made)) == 3 and all(p.is_dir() and not any(p.iterdir()) for p in made)
    assert all(re.fullmatch(r"Oracle-rad-local-seed42-\d{8}-\d{6}(-\d)?", p.name) for p in made)
    assert latest_run_dir(tmp_path / "results", "Oracle-rad-local-seed42") == max(made, key=lambda p: p.name)
