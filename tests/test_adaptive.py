"""--adaptive: thresholds from trials generated on demand into the run folder, through the normal run path (run.py as
a user runs it), reproducible byte for byte, resumable, and checked against simulated listeners of known threshold."""
from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import write_tiny_pack
from tests.harness_cli import REPO, harness_env, marked_processes, python, run_cli, run_dirs

TRIALS, TRACKS = "12", "2"


def adaptive_run(cwd: Path, task: str, *extra: str, method: str = "psi") -> Path:
    out = run_cli("--model", "Oracle", "--task", task, "--seed", "42", "--adaptive", method, "--adaptive-trials",
                  TRIALS, "--adaptive-tracks", TRACKS, *extra, cwd=cwd)
    assert out.returncode == 0, out.stdout + out.stderr
    return cwd / "results"


def run_folder(results: Path, task: str) -> Path:
    [folder] = [p for p in results.iterdir() if p.is_dir() and f"-{task}-adaptive-" in p.name]
    return folder


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "responses.jsonl").read_text().splitlines()]


def without_timing(lines: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "latency_s"} for r in lines]


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_oracle_adaptive_runs_of_two_tasks_write_their_own_pack_and_a_threshold_below_the_hardest_step(tmp_path):
    results = adaptive_run(tmp_path, "pit,cnt")
    for task, hardest in (("pit", 0.2), ("cnt", 1.125)):  # the pack's hardest steps
        folder = run_folder(results, task)
        config = json.loads((folder / "config.json").read_text())
        assert config["adaptive"]["variant"] == "adaptive-psi" and config["adaptive"]["prior"]["threshold"]
        lines = records(folder)
        assert len(lines) == int(TRIALS) * int(TRACKS)
        adaptive = json.loads((folder / "metrics.json").read_text())["adaptive"]
        assert adaptive["reached"] and adaptive["threshold"] < hardest, adaptive
        assert adaptive["ci95"][0] <= adaptive["threshold"] <= adaptive["ci95"][1]
        assert [len(t["differences"]) for t in adaptive["tracks"]] == [int(TRIALS) - 1] * int(TRACKS)  # one catch
        pack = folder / "pack"
        manifest = json.loads((pack / "MANIFEST.json").read_text())
        questions_file = pack / task / "questions.jsonl"
        assert manifest["sha256"][f"{task}/questions.jsonl"] == hashlib.sha256(questions_file.read_bytes()).hexdigest()
        questions = [json.loads(line) for line in questions_file.read_text().splitlines()]
        assert [q["id"] for q in questions] == [r["id"] for r in lines]
        for q in questions:
            for rel, digest in q["sha256"].items():
                assert hashlib.sha256((pack / rel).read_bytes()).hexdigest() == digest
        answers = [q["answer"] for q in questions if q["meta"]["adaptive"]["track"] == 0]
        assert all(sorted(answers[i:i + 2]) == ["A", "B"] for i in range(0, len(answers) - 1, 2))  # A/B balanced
        assert sum(q["meta"]["probe"] == "catch" for q in questions) == int(TRACKS)
        first_round = [q["meta"]["adaptive"]["magnitude"] for q in questions if q["meta"]["adaptive"]["trial"] == 0]
        assert len(set(first_round)) == int(TRACKS)  # one posterior for all tracks: a round asks distinct differences
    out = run_cli("--report", "results", "--out", "report.html", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    html = (tmp_path / "report.html").read_text()
    assert 'id="s-adaptive"' in html and html.count('class="panel adaptive-tracks"') == 2
    assert html.count('class="panel adaptive-curve"') == 2
    board = python("-m", "acousticbench", "leaderboard", "results", cwd=tmp_path)
    assert board.returncode == 0, board.stderr
    assert "Adaptive runs" in board.stdout and f"| Oracle | pit | 42 | psi, {TRACKS} tracks x {TRIALS} trials |" \
        in board.stdout, board.stdout
    assert "100.0 ±" not in board.stdout  # an adaptive run's accuracy is no leaderboard cell


@pytest.mark.parametrize("method", ["staircase", "psi"])
def test_a_rerun_of_the_same_seed_makes_the_same_stimuli_and_answers_and_resume_continues_a_cut_run(tmp_path, method):
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir(), second.mkdir()
    a = run_folder(adaptive_run(first, "lou", method=method), "lou")
    b = run_folder(adaptive_run(second, "lou", method=method), "lou")
    assert tree_bytes(a / "pack") == tree_bytes(b / "pack")
    assert without_timing(records(a)) == without_timing(records(b))
    full = without_timing(records(b))
    kept = (b / "responses.jsonl").read_text().splitlines()[:7]  # a run killed after 7 answers
    (b / "responses.jsonl").write_text("\n".join(kept) + "\n")
    (b / "pack" / "MANIFEST.json").unlink()
    out = run_cli("--model", "Oracle", "--task", "lou", "--seed", "42", "--adaptive", method, "--adaptive-trials",
                  TRIALS, "--adaptive-tracks", TRACKS, "--resume", cwd=second)
    assert out.returncode == 0 and "7 kept from the earlier run" in out.stdout, out.stdout + out.stderr
    assert without_timing(records(b)) == full
    assert tree_bytes(a / "pack") == tree_bytes(b / "pack")


def _workers(mark: str) -> list[int]:
    """The trial makers still running that the run with this marker variable started."""
    return marked_processes(mark, b"spawn_main")


def _started(args: tuple[str, ...], cwd: Path, mark: str) -> subprocess.Popen:
    """The run started in a session of its own, once its trial makers are up and it has 20 answers."""
    proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=harness_env(ACOUSTICBENCH_TEST_MARK=mark))
    deadline = time.monotonic() + 60
    answered = lambda: sum(len(p.read_text().splitlines()) for p in cwd.glob("results/*/responses.jsonl"))  # noqa: E731
    while not (_workers(mark) and answered() >= 20) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before its trial makers were seen"
    return proc


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: trials are made in threads, no worker starts")
def test_trials_made_in_worker_processes_are_the_bytes_made_here_whatever_stops_them(tmp_path):
    from acousticbench.benchmarks.acoustic.adaptive.stimuli import TrialPlace, make_question
    from acousticbench.benchmarks.acoustic.records import Question

    args = ("--model", "Oracle", "--task", "dur", "--seed", "42", "--adaptive", "psi")  # 4 tracks of 60 trials
    cut, killed = tmp_path / "cut", tmp_path / "killed"
    cut.mkdir(), killed.mkdir()
    mark = uuid.uuid4().hex
    proc = _started(args, cut, mark)
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group, the workers too
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and stderr.strip().splitlines() == [
        "interrupted: finished answers are saved; run the same command with --resume to continue."], stderr
    deadline = time.monotonic() + 10
    while _workers(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _workers(mark) == [], "trial makers outlived the run"
    resumed = run_cli(*args, "--resume", cwd=cut)
    assert resumed.returncode == 0 and "kept from the earlier run" in resumed.stdout, resumed.stdout + resumed.stderr

    mark = uuid.uuid4().hex
    proc = _started(args, killed, mark)
    os.kill(_workers(mark)[0], signal.SIGKILL)  # a worker dies (out of memory, say): the rest are made here
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "Traceback" not in stderr, stdout + stderr

    a, b = run_folder(cut / "results", "dur"), run_folder(killed / "results", "dur")
    assert without_timing(records(a)) == without_timing(records(b))
    assert tree_bytes(a / "pack") == tree_bytes(b / "pack")
    here = tmp_path / "here"
    (here / "dur" / "audio").mkdir(parents=True)
    for line in (a / "pack" / "dur" / "questions.jsonl").read_text().splitlines()[::7]:  # made again in this process
        question = Question.model_validate_json(line)
        trial = question.meta["adaptive"]
        again = make_question(here, TrialPlace(42, "dur", trial["track"], trial["trial"], "psi"), trial["magnitude"])
        assert again == question and all((here / rel).read_bytes() == (a / "pack" / rel).read_bytes()
                                         for rel in question.audio)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: trials are made in threads, no worker starts")
def test_no_trial_maker_outlives_its_run_though_one_is_stopped_or_the_run_is_killed_outright(tmp_path):
    args = ("--model", "Oracle", "--task", "dur", "--seed", "42", "--adaptive", "psi")
    mark = uuid.uuid4().hex
    proc = _started(args, tmp_path, mark)
    os.kill(_workers(mark)[0], signal.SIGSTOP)  # a worker that never finishes its trial
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, stderr = proc.communicate(timeout=20)
    finally:
        for pid in _workers(mark):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130 and stderr.strip().splitlines() == [
        "interrupted: finished answers are saved; run the same command with --resume to continue."], stderr

    mark = uuid.uuid4().hex
    (tmp_path / "again").mkdir()
    proc = _started(args, tmp_path / "again", mark)
    proc.kill()  # nothing of the run can shut its workers down
    proc.wait()
    deadline = time.monotonic() + 10
    while _workers(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _workers(mark) == [], "trial makers outlived a run killed outright"


def test_a_script_that_calls_the_api_unguarded_runs_once_its_trials_made_in_threads(tmp_path):
    (tmp_path / "script.py").write_text(
        "import acousticbench\n"
        "print('the script ran', flush=True)\n"
        "acousticbench.evaluate(model=('Oracle',), task=('dur',), seeds=(42,), adaptive='psi', "
        "adaptive_trials=30, results_dir='results')\n")
    out = python("script.py", cwd=tmp_path)  # spawn would run this file again in every worker
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
    assert out.stdout.count("the script ran") == 1
    [folder] = [p for p in (tmp_path / "results").iterdir() if p.is_dir()]
    assert len(records(folder)) == 120


def test_the_width_rule_stops_every_track_at_the_same_round_once_the_runs_interval_is_narrow_enough(tmp_path):
    out = run_cli("--model", "Oracle", "--task", "lou", "--seed", "42", "--adaptive", "psi", "--adaptive-width", "6",
                  "--adaptive-tracks", "3", "--adaptive-trials", "40", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    adaptive = json.loads((run_folder(tmp_path / "results", "lou") / "metrics.json").read_text())["adaptive"]
    lengths = {len(t["differences"]) for t in adaptive["tracks"]}
    assert len(lengths) == 1 and lengths.pop() < 38, adaptive["tracks"]  # 40 trials hold 2 catch trials
    low, high = adaptive["ci95"]
    assert high / low <= 6
    assert adaptive["stopped_by"] == "width" and adaptive["requests"] < adaptive["planned"] == 120
    assert f"--adaptive-width met after {adaptive['requests']} of 120 requests" in out.stdout, out.stdout


def test_a_threshold_beyond_every_difference_asked_is_written_as_such_and_no_accuracy_is_kept(tmp_path):
    """A staircase starts high: the Oracle, right on every trial, never brings it near the grid's lowest difference,
    so its threshold lies below every difference it asked, which is all its answers say; two such runs are not
    ordered by their answers either. An interval's end past the differences a track may present says so."""
    out = run_cli("--model", "Oracle", "--task", "pit", "--seed", "4", "--adaptive", "staircase", "--adaptive-trials",
                  TRIALS, "--adaptive-tracks", TRACKS, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    folder = run_folder(tmp_path / "results", "pit")
    metrics = json.loads((folder / "metrics.json").read_text())
    found = metrics["adaptive"]
    smallest = min(d for t in found["tracks"] for d in t["differences"])
    assert found["asked"][0] == smallest > 10 * found["lowest"] and found["threshold"] < smallest
    assert f"threshold below {smallest:.3g} semitones (every difference asked)" in out.stdout, out.stdout
    assert metrics["scored"]["accuracy"] is None and metrics["by_level"] == {} and metrics["scored"]["n"] > 0

    again = run_cli("--model", "Oracle", "--task", "pit", "--seed", "5", "--adaptive", "staircase",
                    "--adaptive-trials", TRIALS, "--adaptive-tracks", TRACKS, cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    other = next(d for d in run_dirs(tmp_path / "results") if d != folder)
    compared = python("-m", "acousticbench", "compare", str(folder), str(other), cwd=tmp_path)
    assert "B's threshold over A's: not measured" in compared.stdout, compared.stdout
    assert "P(A's threshold is the lower) = not measured" in compared.stdout

    wide = run_cli("--model", "Random", "--task", "cnt", "--seed", "2", "--adaptive", "psi", "--adaptive-trials",
                   TRIALS, "--adaptive-tracks", TRACKS, "--results-dir", str(tmp_path / "wide"), cwd=tmp_path)
    found = json.loads((run_dirs(tmp_path / "wide")[0] / "metrics.json").read_text())["adaptive"]
    assert found["reached"] and found["ci95"][1] > found["highest"], found["ci95"]
    assert f", >{found['highest']:.3g}] over" in wide.stdout, wide.stdout


def test_adaptive_settings_without_adaptive_are_refused_in_one_line(tmp_path):
    out = run_cli("--model", "Oracle", "--task", "pit", "--adaptive-trials", "10", cwd=tmp_path)
    assert out.returncode == 2
    assert "--adaptive-trials has effect only with --adaptive" in out.stderr + out.stdout
    assert not (tmp_path / "results").exists()
    out = run_cli("--model", "Oracle", "--task", "pit", "--adaptive", "psi", "--control", "silence", cwd=tmp_path)
    assert out.returncode == 2 and "--control cannot be run with --adaptive" in out.stderr + out.stdout
    assert not (tmp_path / "results").exists()


def test_rerun_sends_a_failed_trial_to_resume_which_asks_it_again_and_goes_on(tmp_path):
    folder = run_folder(adaptive_run(tmp_path, "pit"), "pit")
    full = without_timing(records(folder))
    cut = full[:9] + [{**full[9], "status": "error", "error": "HTTP 503", "response": None, "chosen": None,
                       "correct": False}]  # the server failed trial 4 of track 1 after its retries: the rounds ended
    (folder / "responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in cut))
    before = (folder / "responses.jsonl").read_bytes()
    out = python("-m", "acousticbench", "rerun", str(folder), "--model", "Oracle", cwd=tmp_path)
    assert out.returncode == 2 and "--resume" in out.stderr, out.stdout + out.stderr
    assert (folder / "responses.jsonl").read_bytes() == before
    out = run_cli("--model", "Oracle", "--task", "pit", "--seed", "42", "--adaptive", "psi", "--adaptive-trials",
                  TRIALS, "--adaptive-tracks", TRACKS, "--resume", cwd=tmp_path)
    assert out.returncode == 0 and "9 kept from the earlier run" in out.stdout, out.stdout + out.stderr
    assert without_timing(records(folder)) == full


def test_a_request_that_fails_stops_the_run_unfinished_and_resume_finishes_it_as_if_never_cut(tmp_path):
    """No later trial can be placed without a failed trial's answer: the run is not reported as a measurement (exit 1,
    no metrics.json, the sweep file says failed) until --resume has asked it again and gone on."""
    from tests.harness_cli import harness_env
    from tests.servers import openai_server
    from tests.servers.local import FaultPlan

    def served(cwd: Path, plan: FaultPlan | None, *extra: str, **options):
        cwd.mkdir(exist_ok=True)
        with openai_server.serve(plan, **options) as server:
            return run_cli("--model", "Voxtral-Mini-3B", "--judge", "rules", "--no-canary", "--task", "pit", "--seed",
                           "42", "--adaptive", "psi", "--adaptive-trials", TRIALS, "--adaptive-tracks", TRACKS, *extra,
                           cwd=cwd, env=harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url))

    cut = served(tmp_path / "cut", FaultPlan(always="400"))  # a 400 is never asked again: round 0 fails
    assert cut.returncode == 1, cut.stdout + cut.stderr
    assert "stopped: trial pit_t00_0000 has no answer (" in cut.stderr and "--resume" in cut.stderr
    [folder] = run_dirs(tmp_path / "cut" / "results")
    assert not (folder / "metrics.json").exists()
    assert "finished_at" not in json.loads((folder / "config.json").read_text())
    [sweep] = (tmp_path / "cut" / "results").glob("sweep-*.json")
    assert [c["status"] for c in json.loads(sweep.read_text())["cells"]] == ["failed"]
    board = python("-m", "acousticbench", "leaderboard", str(tmp_path / "cut" / "results"), cwd=tmp_path)
    assert "threshold" not in board.stdout.lower(), board.stdout  # nothing measured is shown

    whole = served(tmp_path / "whole", None)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    [other] = run_dirs(tmp_path / "whole" / "results")
    compared = python("-m", "acousticbench", "compare", str(folder), str(other), cwd=tmp_path)
    assert compared.returncode == 2 and "has not finished" in compared.stderr, compared.stdout + compared.stderr
    resumed = served(tmp_path / "cut", None, "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert without_timing(records(folder)) == without_timing(records(other))
    assert all(r["status"] != "error" for r in records(folder)) and len(records(folder)) == 24

    prose = served(tmp_path / "prose", None, answer_text="Both clips sound alike to me.")  # never an option
    assert prose.returncode == 0, prose.stdout + prose.stderr
    assert "threshold not reached" in prose.stdout and "0 answered, 24 unparsed" in prose.stdout, prose.stdout


def test_a_dry_run_plans_an_adaptive_run_at_its_most_requests_and_writes_nothing(tmp_path):
    out = run_cli("--model", "Oracle", "--task", "dur", "--seed", "42", "--adaptive", "psi", "--adaptive-trials", "10",
                  "--adaptive-tracks", "3", "--dry-run", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    [row] = [line.split() for line in out.stdout.splitlines() if line.startswith("  Oracle on dur adaptive psi")]
    questions, requests, seconds = row[7:10]  # after 'Oracle on dur adaptive psi (seed 42)'
    assert questions == requests == "30" and float(seconds) > 30, row  # two clips of a second or more a trial
    assert "Left out of this power: 1 adaptive psi run" in out.stdout
    assert "# Oracle on dur adaptive psi (seed 42): made while it runs, up to 30 questions" in out.stdout, out.stdout
    assert list(tmp_path.iterdir()) == []


def test_adaptive_runs_pair_with_no_other_run_and_their_references_fill_no_accuracy_cell(tmp_path):
    """An adaptive run's trial ids are the same in every run, its trials are not: each was placed by that run's own
    answers. Model against model, compare and the references pair only what two runs both asked."""
    out = run_cli("--model", "Oracle,Random", "--task", "pit", "--seed", "42", "--adaptive", "psi",
                  "--adaptive-trials", TRIALS, "--adaptive-tracks", TRACKS, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    # the sweep's table and file give each its threshold: trials placed near 75% for every model are no accuracy
    table = [line.split() for line in out.stdout.splitlines() if "pit/adaptive-psi" in line and "results/" in line]
    assert [row[4] for row in table] == ["threshold", "threshold"], out.stdout
    [sweep] = (tmp_path / "results").glob("sweep-*.json")
    cells = json.loads(sweep.read_text())["cells"]
    assert all(c["kind"] == "adaptive psi" and c["accuracy"] is None and c["figure"].startswith("threshold")
               for c in cells), cells
    pack = write_tiny_pack(tmp_path / "archive", "pit", n_scored=20)
    out = run_cli("--model", "Oracle,Random", "--task", "pit", "--seed", "42", "--archive", str(pack), cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    results = tmp_path / "results"
    oracle, random = (d for d in run_dirs(results) if "-adaptive-" in d.name)

    paired = python("-m", "acousticbench", "leaderboard", str(results), "--paired", cwd=tmp_path)
    assert paired.returncode == 0, paired.stderr
    rows = [line for line in paired.stdout.splitlines() if line.startswith("| Oracle")]
    assert len(rows) == 1 and "20 questions" in rows[0], paired.stdout  # the pack's runs alone
    assert "2 adaptive psi runs, each made of trials its own answers placed" in paired.stdout

    # compare: two adaptive runs by their thresholds, never answer by answer; an adaptive run against the pack's, no
    compared = python("-m", "acousticbench", "compare", str(oracle), str(random), cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    assert "Agreement" not in compared.stdout, compared.stdout
    # the Oracle heard every difference asked: its interval is the prior's edge, no measurement to take a ratio of
    assert "  A: below 0.025 semitones (every difference asked)" in compared.stdout, compared.stdout
    assert "B's threshold over A's: not measured (A's lies below every difference its run asked" in compared.stdout
    lower = float(compared.stdout.split("P(A's threshold is the lower) = ")[1].split()[0])
    assert lower > 0.99, compared.stdout
    pack_run = next(d for d in run_dirs(results) if d.name.startswith("Oracle-pit-local"))
    compared = python("-m", "acousticbench", "compare", str(oracle), str(pack_run), cwd=tmp_path)
    assert compared.returncode == 2 and "is an adaptive psi run" in compared.stderr, compared.stdout + compared.stderr
    assert compared.stdout == ""

    report = python("-m", "acousticbench", "report", str(results), "--out", str(tmp_path / "r.html"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "r.html").read_text()
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))["paired"]
    assert len(data["models"]) == 2 and data["tests"] == 1, data["models"]  # the pack's runs alone
    assert not any("adaptive" in name for name in data["models"])
    assert "Left out of the model-against-model grid and its q-values: 2 adaptive psi runs" in data["left_out"]
    assert "2 adaptive psi runs" in page  # said beside the view

    refs = tmp_path / "refs"
    promoted = python("-m", "acousticbench", "reference", "promote", str(random), "--references", str(refs),
                      cwd=tmp_path)
    assert promoted.returncode == 0, promoted.stderr
    [kept] = (refs / "Random" / "pit" / "adaptive-psi").glob("run_*.jsonl")
    lines = [json.loads(line) for line in kept.read_text().splitlines()]
    assert all(line["meta"]["adaptive"]["track"] in (0, 1) for line in lines if line["kind"] == "scored")
    summary = json.loads((kept.parent / "summary.json").read_text())
    assert summary["made_as"] == f"psi, {TRACKS} tracks x {TRIALS} trials" and summary["mean_accuracy"] is None
    assert [(r["accuracy"], r["figure"].split()[0]) for r in summary["runs"]] == [(None, "threshold")], summary
    board = python("-m", "acousticbench", "leaderboard", "--references", str(refs), "--csv", cwd=tmp_path)
    assert board.returncode == 0 and "pit" not in board.stdout, board.stdout + board.stderr  # no accuracy cell
    board = python("-m", "acousticbench", "leaderboard", "--references", str(refs), cwd=tmp_path)
    assert f"| Random | pit | 42 (reference) | {summary['made_as']} | " \
        f"{summary['runs'][0]['figure'].removeprefix('threshold ')} |" \
        in board.stdout, board.stdout  # its threshold, in the adaptive table
    # a run made otherwise is not one more seed of that reference
    shorter = run_cli("--model", "Random", "--task", "pit", "--seed", "7", "--adaptive", "psi", "--adaptive-trials",
                      "4", "--adaptive-tracks", TRACKS, "--results-dir", str(tmp_path / "short"), cwd=tmp_path)
    assert shorter.returncode == 0, shorter.stdout + shorter.stderr
    refused = python("-m", "acousticbench", "reference", "promote", str(run_dirs(tmp_path / "short")[0]),
                     "--references", str(refs), cwd=tmp_path)
    assert refused.returncode == 2 and f"made as psi, {TRACKS} tracks x {TRIALS} trials, this run as psi, {TRACKS} " \
        "tracks x 4 trials" in refused.stderr, refused.stderr
    otherwise = run_cli("--model", "Random", "--task", "pit", "--seed", "42", "--adaptive", "psi", "--adaptive-trials",
                        "4", "--adaptive-tracks", TRACKS, "--results-dir", str(tmp_path / "other42"), cwd=tmp_path)
    assert otherwise.returncode == 0, otherwise.stdout + otherwise.stderr
    board = python("-m", "acousticbench", "leaderboard", "--references", str(refs), str(tmp_path / "other42"),
                   cwd=tmp_path)  # the seed's reference and a run of it made otherwise: two rows, neither hidden
    assert f"| Random | pit | 42 (reference) | {summary['made_as']} |" in board.stdout, board.stdout
    assert f"| Random | pit | 42 | psi, {TRACKS} tracks x 4 trials |" in board.stdout, board.stdout
    checked = run_cli("--model", "Random", "--task", "pit", "--seed", "42", "--adaptive", "psi", "--adaptive-trials",
                      "4", "--adaptive-tracks", TRACKS, "--compare-reference", "--references", str(refs),
                      "--results-dir", str(tmp_path / "not-asked"), cwd=tmp_path)
    assert checked.returncode == 2 and f"was made as {summary['made_as']}" in checked.stderr, checked.stderr
    assert not (tmp_path / "not-asked").exists()  # refused before any trial was asked
    fresh = tmp_path / "fresh-refs"  # given together, they are refused before either is written
    refused = python("-m", "acousticbench", "reference", "promote", str(random), str(run_dirs(tmp_path / "short")[0]),
                     "--references", str(fresh), cwd=tmp_path)
    assert refused.returncode == 2 and "were not run alike" in refused.stderr and not fresh.exists(), refused.stderr

    # another model checked against that reference: its trials went elsewhere once its answers differed
    other = refs / "Oracle" / "pit" / "adaptive-psi"
    other.mkdir(parents=True)
    for f in kept.parent.iterdir():
        (other / f.name).write_text(f.read_text().replace('"model": "Random"', '"model": "Oracle"'))
    checked = run_cli("--model", "Oracle", "--task", "pit", "--seed", "42", "--adaptive", "psi", "--adaptive-trials",
                      TRIALS, "--adaptive-tracks", TRACKS, "--compare-reference", "--references", str(refs),
                      "--results-dir", str(tmp_path / "again"), cwd=tmp_path)
    [again] = run_dirs(tmp_path / "again")
    comparison = json.loads((again / "comparison.json").read_text())
    by_id = {line["id"]: line for line in lines}
    same = [r for r in records(again) if r["meta"]["adaptive"] == by_id[r["id"]]["meta"]["adaptive"]]
    assert 0 < len(same) < len(lines) and comparison["n"] == len(same), (len(same), comparison)
    assert comparison["matches"] == sum(r["chosen"] == by_id[r["id"]]["chosen"] for r in same)
    assert "name other questions in the reference" in comparison["note"], checked.stdout
    # the report's answer browser shows the reference's answer only beside the same trial
    report = python("-m", "acousticbench", "report", str(tmp_path / "again"), "--references", str(refs), "--out",
                    str(tmp_path / "again.html"), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "again.html").read_text()
    shown = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))["records"]["ref"]
    assert sum(ref != -1 for ref in shown) == len(same), shown


def test_an_adaptive_run_is_never_read_as_a_run_of_the_pack_whatever_the_tool(tmp_path):
    """The edges of an adaptive run: runs made otherwise are not one cell; nothing averages its accuracy; a bare copy of
    its answers, its own pack and its labels pair with nothing; it counts the trials it asked."""
    import acousticbench

    results = adaptive_run(tmp_path, "pit")
    shorter = run_cli("--model", "Oracle", "--task", "pit", "--seed", "42", "--adaptive", "psi", "--adaptive-trials",
                      "4", "--adaptive-tracks", "1", cwd=tmp_path)  # the same cell and seed, made otherwise
    assert shorter.returncode == 0, shorter.stdout + shorter.stderr
    longer, short = sorted(run_dirs(results), key=lambda d: len(records(d)), reverse=True)
    board = python("-m", "acousticbench", "leaderboard", str(results), cwd=tmp_path)
    rows = [line.split("|") for line in board.stdout.splitlines() if line.startswith("| Oracle | pit | 42 | psi,")]
    assert [(row[4].strip(), row[-2].strip()) for row in rows] == [("psi, 2 tracks x 12 trials", "22"),
                                                                   ("psi, 1 track x 4 trials", "4")], board.stdout
    assert "the one that finished last counts" not in board.stdout + board.stderr
    paired = python("-m", "acousticbench", "leaderboard", str(results), "--paired", cwd=tmp_path)
    assert "2 adaptive psi runs" in paired.stdout and "Oracle on pit (2 runs of 1 seed)" in paired.stdout, \
        paired.stdout  # the line names what it leaves out, run for run
    report = python("-m", "acousticbench", "report", str(results), "--out", str(tmp_path / "r.html"), cwd=tmp_path)
    page = (tmp_path / "r.html").read_text()
    assert report.returncode == 0 and "2 runs, 28 answers (2 of the runs adaptive" in page, report.stderr
    assert 'id="s-leaderboard"' not in page and 'id="s-adaptive"' in page  # no empty table of accuracies
    assert all(e.accuracy is None for e in acousticbench.leaderboard(results).entries), "no accuracy to average"

    config = json.loads((longer / "config.json").read_text())
    assert config["n_items"] == len(records(longer)) == 24 and config["n_items_at_most"] == 24
    assert "items: made as the run goes, at most 24" in (longer / "run.log").read_text()

    loose = tmp_path / "loose"  # answers copied away from their run folders
    for name, folder in (("a", longer), ("b", short)):
        (loose / name).mkdir(parents=True)
        (loose / name / "responses.jsonl").write_bytes((folder / "responses.jsonl").read_bytes())
    compared = python("-m", "acousticbench", "compare", str(loose / "a" / "responses.jsonl"),
                      str(loose / "b" / "responses.jsonl"), cwd=tmp_path)
    assert compared.returncode == 2 and "is an adaptive psi run" in compared.stderr, compared.stdout + compared.stderr
    assert "pass their run folders" in compared.stderr and compared.stdout == ""
    agreed = python("-m", "acousticbench", "judge", "agree", str(longer / "responses.jsonl"),
                    str(short / "responses.jsonl"), cwd=tmp_path)
    assert agreed.returncode == 2 and "name other answers in each" in agreed.stderr, agreed.stdout + agreed.stderr

    own_pack = longer / "pack"
    exported = python("-m", "acousticbench", "export-lmms-tasks", str(tmp_path / "lmms"), "--archive", str(own_pack),
                      "--task", "pit", cwd=tmp_path)
    assert exported.returncode == 2 and "an adaptive run's own trials" in exported.stderr, exported.stderr
    assert not (tmp_path / "lmms").exists()
    asked = run_cli("--model", "Oracle", "--task", "pit", "--archive", str(own_pack), "--results-dir",
                    str(tmp_path / "on-its-pack"), cwd=tmp_path)
    assert asked.returncode == 2 and "an adaptive run's own trials" in asked.stderr, asked.stderr
    clip = next((own_pack / "pit" / "audio").iterdir())
    clip.write_bytes(clip.read_bytes()[:-10])
    verified = python("-m", "acousticbench", "pack", "verify", "--archive", str(own_pack), "--task", "pit",
                      cwd=tmp_path)
    assert verified.returncode == 1 and "To fix: these trials were made by an adaptive run" in verified.stdout, \
        verified.stdout + verified.stderr

    infinite = run_cli("--model", "Oracle", "--task", "pit", "--adaptive", "psi", "--adaptive-width", "inf",
                       "--results-dir", str(tmp_path / "inf"), cwd=tmp_path)
    assert infinite.returncode == 2 and infinite.stderr.count("\n") == 1, infinite.stderr
    assert "--adaptive-width" in infinite.stderr and not (tmp_path / "inf").exists()


@pytest.mark.parametrize("task", ["lou", "dir"])
def test_a_listener_of_known_threshold_is_found_and_one_that_never_hears_is_not_reached(task):
    from acousticbench.benchmarks.acoustic.adaptive.listener import Listener, simulated_run
    from acousticbench.benchmarks.acoustic.adaptive.stimuli import difference, grid_of

    truth = {"lou": 1.5, "dir": 6.0}[task]
    found, path, requests = simulated_run(task, 3, Listener(truth, spread=0.3, lapse=0.04, bias=0.6), 2, 40)
    assert found.low <= truth <= found.high and found.width < 3
    assert requests == 80 and path[-1][1].width <= path[0][1].width
    deaf, _, _ = simulated_run(task, 3, Listener(None, bias=0.7), 2, 20)
    assert difference(task, deaf.median) > difference(task, grid_of(task).stimuli[-1])


def test_the_staircase_goes_down_after_two_right_answers_and_up_after_one_wrong():
    from acousticbench.benchmarks.acoustic.adaptive.procedure import staircase_next
    from acousticbench.benchmarks.acoustic.adaptive.stimuli import grid_of

    grid = grid_of("pit")
    start = staircase_next(grid, [])
    assert staircase_next(grid, [(start, True)]) == start
    harder = staircase_next(grid, [(start, True), (start, True)])
    assert harder < start
    assert staircase_next(grid, [(start, True), (start, True), (harder, False)]) == start


def test_psi_puts_trials_near_the_threshold_and_its_interval_narrows():
    import numpy as np

    from acousticbench.benchmarks.acoustic.adaptive.procedure import estimate, p_correct, psi_next
    from acousticbench.benchmarks.acoustic.adaptive.stimuli import grid_of

    grid, truth, rng = grid_of("pit"), 0.5, np.random.default_rng(5)
    trials = []
    for _ in range(80):
        x = psi_next(grid, trials)
        trials.append((x, bool(rng.random() < p_correct(np.log(x), np.log(truth), 0.3, 0.0))))
    found = estimate(grid, trials)
    assert found.low <= truth <= found.high and found.width < estimate(grid, trials[:20]).width
    late = [x for x, _ in trials[40:]]
    assert 0.1 < float(np.median(late)) < 2.5  # the pack's range is 0.2-12 semitones, its grid 0.025-12


def test_resume_refuses_an_earlier_run_whose_trials_were_made_otherwise(tmp_path):
    folder = run_folder(adaptive_run(tmp_path, "lou"), "lou")
    lines = (folder / "responses.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["meta"]["step"] = first["meta"]["step"] * 2  # as another version of the generator would have made it
    (folder / "responses.jsonl").write_text("\n".join([json.dumps(first), *lines[1:5]]) + "\n")
    out = run_cli("--model", "Oracle", "--task", "lou", "--seed", "42", "--adaptive", "psi", "--adaptive-trials",
                  TRIALS, "--adaptive-tracks", TRACKS, "--resume", cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "was made otherwise than this harness makes it" in out.stderr


def test_the_packs_answers_read_by_the_adaptive_posterior_cover_a_known_threshold_and_narrow_with_more_answers():
    import numpy as np

    from acousticbench.benchmarks.acoustic.adaptive.procedure import estimate_of_counts, p_correct
    from acousticbench.benchmarks.acoustic.adaptive.stimuli import grid_of

    grid, truth, rng = grid_of("rad"), 30.0, np.random.default_rng(11)
    steps = (200.0, 80.0, 40.0, 20.0, 10.0)  # the pack's radius steps, off the adaptive grid

    def read(per_step: int):
        chance = {s: float(p_correct(np.log(s), np.log(truth), 0.3, 0.0)) for s in steps}
        return estimate_of_counts(grid, {s: (per_step, int(rng.binomial(per_step, chance[s]))) for s in steps})

    few, many = read(20), read(320)
    assert few.low <= truth <= few.high and many.low <= truth <= many.high
    assert many.width < few.width and abs(many.median / truth - 1) < 0.1


def test_two_runs_thresholds_compared_hold_the_true_ratio_and_order_the_listeners():
    """compare's ratio of two adaptive runs' thresholds (adaptive/compare.py), on listeners of known thresholds: its
    95% interval holds the true ratio, and P(A's is the lower) sides with the listener whose threshold is lower."""
    import numpy as np

    from acousticbench.benchmarks.acoustic.adaptive.compare import compare_thresholds
    from acousticbench.benchmarks.acoustic.adaptive.procedure import p_correct, psi_next
    from acousticbench.benchmarks.acoustic.adaptive.stimuli import grid_of
    from acousticbench.benchmarks.acoustic.records import Record

    grid, config = grid_of("lou"), {"adaptive": {"method": "psi"}}

    def run(truth: float, rng) -> list:
        trials, records = [], []
        for k in range(60):
            x = psi_next(grid, trials)
            right = bool(rng.random() < p_correct(np.log(x), np.log(truth), 0.3, 0.0))
            trials.append((x, right))
            records.append(Record(id=f"lou_t00_{k:04d}", model="M", task="lou", seed=1, status="answered",
                                  response="A", split="eval", kind="scored", prompt="", audio=[], chosen="A",
                                  answer="A" if right else "B", correct=right, judge={"method": "rules"},
                                  meta={"adaptive": {"method": "psi", "track": 0, "trial": k, "magnitude": x}}))
        return records

    held, sided = 0, 0
    for pair in range(10):
        rng = np.random.default_rng([11, pair])
        low = float(np.exp(rng.uniform(np.log(0.5), np.log(2.0))))  # dB; B's threshold is three times A's
        found = compare_thresholds("lou", (config, run(low, rng)), (config, run(3 * low, rng)))
        _, below, above = found.ratio
        held += below <= 3 <= above
        sided += found.a_lower > 0.5
    assert held >= 9 and sided >= 9, (held, sided)
