"""Every count printed beside an n counts that n, or names its own total: the run line's statuses are those of the
scored questions its accuracy is over, with the diagnostic trials counted apart under their own total; the sweep file
and its closing table count the errors among the n they show; AudioICL's 'No answer %' is a share of all episodes, as
Truncated % and Error % beside it are."""
from __future__ import annotations

import json
import re

from acousticbench.benchmarks.audioicl.leaderboard import entry
from acousticbench.benchmarks.audioicl.record import EpisodeRecord, ICLMetrics, icl_metrics
from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs
from servers import openai_server
from servers.fixtures import question_keys
from servers.local import FaultPlan

SERVED = ("--model", "Voxtral-Mini-3B", "--task", "rad", "--judge", "rules", "--concurrency", "1", "--seed", "42")


def test_the_run_line_and_the_sweep_file_count_the_scored_questions_and_name_the_trials_apart(tmp_path):
    archive = write_tiny_pack(tmp_path / "archive", "rad", 8)
    plan = FaultPlan(by_key={question_keys(archive)["rad_0009"]: ["400"]})  # the catch trial fails for good
    with openai_server.serve(plan) as server:
        out = run_cli(*SERVED, "--archive", str(archive), cwd=tmp_path,
                      env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if "accuracy" in line and "->" in line)
    scored = re.search(r"over (\d+) scored questions: (\d+) answered, (\d+) unparsed, (\d+) refused, (\d+) errors;",
                       line)
    assert scored, line
    n, *counts = map(int, scored.groups())
    assert n == 8 and sum(counts) == 8 and counts[-1] == 0, line  # the catch trial's error is not a scored one's
    trials = re.search(r"the (\d+) diagnostic trials beside them: (\d+) answered, (\d+) unparsed, (\d+) refused, "
                       r"(\d+) errors", line)
    assert trials and int(trials.group(1)) == 3 and int(trials.group(5)) == 1, line
    [sweep] = (tmp_path / "results").glob("sweep-*.json")
    [cell] = json.loads(sweep.read_text())["cells"]
    assert (cell["n"], cell["errors"]) == (8, 0)
    table = json.loads(sweep.read_text())["table"].splitlines()
    assert table[1].split()[4:7] == ["accuracy", "n", "errors"] and table[2].split()[5:7] == ["8", "0"], table
    assert len(run_dirs(tmp_path / "results")) == 1


def episode(i: int, status: str, prediction: str | None) -> EpisodeRecord:
    return EpisodeRecord(id=f"AudioICL{i:05d}", task="count", model="M", seed=42, status=status, shots=1,
                         prompt="<audio 1>", audio=["a.wav"], response=None if status == "error" else "x",
                         prediction=prediction, gt="3", correct=prediction == "3", scoring="strict")


def test_audioicls_no_answer_share_is_over_all_episodes_as_truncated_and_errors_are():
    records = [episode(1, "answered", "3"), episode(2, "answered", None), *(episode(i, "error", None)
                                                                           for i in range(3, 11))]
    metrics = icl_metrics(records, model="M", task="count", shots=1, seed=42, prompt_style="default", scoring="strict")
    assert (metrics.no_answer, metrics.no_answer_rate) == (1, 0.1)  # 1 of 10 episodes; over the answered it was 0.5
    config = {"spec": {"model": "M", "task": "count", "seed": 42, "shots": 1}, "audioicl": {"meta_sha256": "m"}}
    assert entry(None, config, metrics).parse_failure_rate == 0.1
    # a metrics.json written before `no_answer` gave the share over the answered episodes: brought to all of them
    old = ICLMetrics.model_validate({**metrics.model_dump(exclude={"no_answer"}), "no_answer_rate": 0.5})
    assert entry(None, config, old).parse_failure_rate == 0.1
