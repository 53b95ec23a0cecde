"""Model against model, checked against a simulated listener of known truth (servers/listener.py): two listeners of
identical truth over 3 seeds are called different in about 5% of repeats, the difference's interval covers the true
difference at its nominal rate, and the report, `acousticbench leaderboard --paired` and compare_runs.py give the same
test on runs served by the real server (the repeats run at the statistics level, through the functions those tools
call, with the listener the server answers as)."""
from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics

import pytest

from acousticbench.core.significance import pair_questions, paired_difference
from acousticbench.tools.model_grid import grid_tests
from conftest import write_tiny_pack
from harness_cli import harness_env, run_cli, run_dirs, script
from servers import openai_server
from servers.listener import Listener, Question, pack_questions, uniform

SEEDS = (42, 43, 44)
QUESTIONS, REPEATS = 200, 300
FLAWS = {"refusal": 0.03, "cutoff": 0.03}  # never right, as in a served run


def pooled_mcnemar_p(b: int, c: int) -> float:
    """The exact McNemar p-value with every seed counted as a new pair (what the report used to do)."""
    tail = sum(math.comb(b + c, i) for i in range(min(b, c) + 1)) / 2 ** (b + c)
    return min(1.0, 2 * tail)


def drawn_questions(repeat: int) -> dict[str, Question]:
    """A fresh sample of questions for each repeat: a level from 1 to 5 and an answer, each equally likely."""
    return {f"{repeat}-{i}": Question("A" if uniform(repeat, i, "answer") < 0.5 else "B",
                                      1 + int(5 * uniform(repeat, i, "level"))) for i in range(QUESTIONS)}


def answers(listener: Listener, questions: dict[str, Question]) -> dict[str, dict[int, bool]]:
    return {key: dict(zip(SEEDS, listener.right(key, q, SEEDS))) for key, q in questions.items()}


@pytest.mark.slow  # a false-positive study over many repeats; the paired test itself stays in the inner loop
def test_two_listeners_of_identical_truth_are_called_different_in_about_5_percent_of_repeats():
    called = pooled = 0
    for repeat in range(REPEATS):
        questions = drawn_questions(repeat)
        a = answers(Listener(f"a{repeat}", **FLAWS), questions)
        b = answers(Listener(f"b{repeat}", **FLAWS), questions)
        [test] = grid_tests({("A", "rad"): a, ("B", "rad"): b})  # what the report and the leaderboard call
        assert test.result.questions == QUESTIONS and test.pairing.seeds == SEEDS
        called += test.result.p_value < 0.05
        # the same repeats with every seed counted as new pairs, as the report used to: the simulation has teeth
        only_a = sum(a[k][s] and not b[k][s] for k in questions for s in SEEDS)
        only_b = sum(b[k][s] and not a[k][s] for k in questions for s in SEEDS)
        pooled += pooled_mcnemar_p(only_a, only_b) < 0.05
    assert called / REPEATS <= 0.07, f"{called} of {REPEATS} repeats called different"
    assert pooled / REPEATS > 0.15, "the simulated seeds are not near-copies: the test would not catch seeds as pairs"


def true_difference(a: Listener, b: Listener) -> float:
    """A - B over the population the questions are drawn from (levels and answers equally likely)."""
    every = [Question(answer, level) for answer in "AB" for level in range(1, 6)]
    return statistics.fmean(a.p_right(q) - b.p_right(q) for q in every)


def test_the_differences_interval_covers_the_true_difference_at_its_nominal_rate():
    better = {"knows": (1.0, 0.95, 0.8, 0.6, 0.35), "bias_a": 0.6, **FLAWS}  # 9.4 points better
    truth = true_difference(Listener("x", **better), Listener("y", **FLAWS))
    covered, rejected = 0, 0
    for repeat in range(REPEATS):
        questions = drawn_questions(repeat)
        a, b = Listener(f"better{repeat}", **better), Listener(f"plain{repeat}", **FLAWS)
        result = paired_difference(pair_questions(answers(a, questions), answers(b, questions)).counts)
        covered += result.interval.low <= truth <= result.interval.high
        rejected += result.p_value < 0.05
    assert 0.92 <= covered / REPEATS <= 0.98, f"covered {covered} of {REPEATS}"
    assert rejected / REPEATS > 0.6  # and the real difference is found most of the time


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Two listeners of identical truth served as two models (3 seeds each), and the first model served a second
    way (its other API model id) on one seed: run folders written by run.py through the real server."""
    root = tmp_path_factory.mktemp("listeners")
    archive = write_tiny_pack(root / "archive", "rad", 40)
    questions = pack_questions(archive)
    listeners = {"listener/alpha": Listener("alpha", **FLAWS), "listener/beta": Listener("beta", **FLAWS)}
    with openai_server.serve(model_ids=list(listeners), listeners=listeners, questions=questions) as server:
        env = harness_env(ACOUSTICBENCH_VOXTRAL_MINI_3B_ENDPOINT=server.url,
                          ACOUSTICBENCH_QWEN2_AUDIO_7B_INSTRUCT_ENDPOINT=server.url)
        for model, api, seeds in (("Voxtral-Mini-3B", "listener/alpha", "42,43,44"),
                                  ("Qwen2-Audio-7B-Instruct", "listener/beta", "42,43,44"),
                                  ("Voxtral-Mini-3B", "listener/beta", "42")):
            out = run_cli("--model", model, "--api-model", api, "--task", "rad", "--seeds", seeds, "--archive",
                          str(archive), "--judge", "rules", cwd=root, env=env)
            assert out.returncode == 0, out.stderr
    return root, questions, listeners


def records_of(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "responses.jsonl").read_text().splitlines()]


def test_served_runs_answer_as_the_simulated_listener_says(served):
    root, questions, listeners = served
    by_id = {qid: (key, q) for key, (qid, q) in questions.items()}
    statuses = set()
    for folder in run_dirs(root / "results"):
        listener = listeners[json.loads((folder / "config.json").read_text())["backend"]["served_model_id"]]
        for r in records_of(folder):
            key, q = by_id[r["id"]]
            if q.answer is not None:
                assert [bool(r["correct"])] == listener.right(key, q, (r["seed"],)), r
            statuses.add(r["status"])
    assert {"answered", "refused", "truncated"} <= statuses  # refusals and cut-offs recorded as such, never right


def test_report_leaderboard_and_compare_give_the_same_paired_test(served):
    from scipy.stats import permutation_test

    root, _, _ = served
    served_as = {f: json.loads((f / "config.json").read_text())["backend"]["served_model_id"]
                 for f in run_dirs(root / "results")}
    alpha = [f for f, served in served_as.items() if served == "listener/alpha"]
    beta = [f for f, served in served_as.items() if served == "listener/beta" and "Qwen2" in f.name]
    assert len(alpha) == len(beta) == 3

    means: list[dict[str, list[bool]]] = [{}, {}]  # each side: question -> right under each seed
    for side, runs in enumerate((alpha, beta)):
        for r in (r for folder in runs for r in records_of(folder) if r["kind"] == "scored"):
            means[side].setdefault(r["id"], []).append(bool(r["correct"]))
    diffs = [statistics.fmean(means[0][q]) - statistics.fmean(means[1][q]) for q in means[1]]
    expected = permutation_test((diffs,), statistics.fmean, permutation_type="samples", n_resamples=50_000,
                                random_state=0).pvalue

    out = script("compare_runs.py", *map(str, alpha), "--vs", *map(str, beta), cwd=root)
    assert out.returncode == 0, out.stderr
    assert "over 40 questions" in out.stdout and "averaged over the 3 seeds both ran: 42, 43, 44" in out.stdout
    p_compare = float(re.search(r"p = ([\d.e-]+)", out.stdout).group(1))
    detectable = float(re.search(r"Power: with 40 questions and 3 seeds, a difference of ([\d.]+) points is "
                                 r"detectable at 80% power", out.stdout).group(1))

    out = script("leaderboard.py", "results", "--paired", "--csv", cwd=root)
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == 3  # three rows: the first model served two ways is two rows, each named by what differs
    [row] = [r for r in rows if "alpha" in r["a"] and r["b"] == "Qwen2-Audio-7B-Instruct"]
    assert row["n"] == "40" and row["n_counts"] == "questions" and row["seeds"] == "42,43,44"
    assert {r["a"] for r in rows} | {r["b"] for r in rows} == {
        "Voxtral-Mini-3B [api model listener/alpha, served listener/alpha]",
        "Voxtral-Mini-3B [api model listener/beta, served listener/beta]", "Qwen2-Audio-7B-Instruct"}

    assert run_cli("--report", "results", "--out", "report.html", cwd=root).returncode == 0
    html = (root / "report.html").read_text()
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', html, re.S).group(1))["paired"]
    models = data["models"]
    pair = sorted((models.index(row["a"]), models.index(row["b"])))
    cell = data["cells"][f"{pair[0]},{pair[1]}"][0]
    assert cell[1] == 40 and cell[2] == list(SEEDS) and data["tests"] == 3

    assert p_compare == pytest.approx(float(row["p"]), rel=1e-3) == pytest.approx(cell[9], rel=1e-3)
    assert cell[9] == pytest.approx(expected, abs=0.01)  # an independent sign-flip count over the same questions
    assert float(row["q_bh"]) == pytest.approx(cell[10], rel=1e-3) and cell[10] >= cell[9]
    # the power figure (tests/test_power.py checks what it claims) is one figure in all three
    assert 100 * float(row["detectable_80"]) == pytest.approx(detectable, abs=0.05)
    assert 100 * cell[13] == pytest.approx(detectable, abs=0.05)


def test_compare_refuses_a_side_that_mixes_runs_made_differently(served):
    root, _, _ = served
    served_as = {f: json.loads((f / "config.json").read_text())["backend"]["served_model_id"]
                 for f in run_dirs(root / "results")}
    voxtral = sorted((f for f in served_as if f.name.startswith("Voxtral")), key=lambda f: f.name)
    qwen = [str(f) for f in served_as if f.name.startswith("Qwen2")]
    mixed = [str(f) for f in voxtral if "seed42" not in f.name or served_as[f] == "listener/beta"]
    out = script("compare_runs.py", *mixed, "--vs", *qwen, cwd=root)
    assert out.returncode == 2 and "side A mixes runs that differ in api model" in out.stderr, out.stderr
    out = script("compare_runs.py", *map(str, voxtral), "--vs", *qwen, cwd=root)  # two runs of seed 42
    assert out.returncode == 2 and "not one per seed (seed 42 x2, seed 43, seed 44)" in out.stderr, out.stderr
