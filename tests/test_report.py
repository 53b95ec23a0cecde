"""`run.py --report`: the HTML report of real runs (Oracle, Random, Always-A on a tiny pack; AudioICL where espeak-ng
can build its pack) and of synthetic LoRA runs, opened in a real headless chromium where one is installed."""
from __future__ import annotations

import json
import re
import shutil
import statistics
from pathlib import Path

import pytest

from audioicl_pack import reduced_pack
from conftest import write_tiny_pack
from harness_cli import run_cli
from report_page import Page, browser  # noqa: F401 (a fixture)
from report_runs import write_run

BASE, TUNED = "Kimi-Audio-7B-Instruct", "Kimi-Audio-7B-Instruct+demo"
HAS_ICL = shutil.which("espeak-ng") is not None


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """results/ of real runs of both benchmarks, a LoRA finetune and its base, and a reference with one planted
    disagreement; the report written into report/ (so its clips are linked as ../archive/...)."""
    root = tmp_path_factory.mktemp("report")
    archive = write_tiny_pack(root / "archive", "rad", 20)
    out = run_cli("--model", "Oracle,Random,Always-A", "--task", "rad", "--seeds", "42,43", "--judge", "rules",
                  "--archive", str(archive), cwd=root)
    assert out.returncode == 0, out.stderr
    if HAS_ICL:
        shutil.copytree(reduced_pack() / "audioicl", archive / "audioicl")
        out = run_cli("--model", "Oracle,Random", "--task", "AudioCount", "--shots", "1,3", "--seeds", "42,43",
                      "--max-samples", "4", "--archive", str(archive), cwd=root)
        assert out.returncode == 0, out.stderr
    for seed in (42, 43):
        write_run(root / "results", BASE, "rad", seed, midpoint=2.0, split="eval")
        write_run(root / "results", TUNED, "rad", seed, midpoint=4.0, split="eval")
    [oracle42] = (root / "results").glob("Oracle-rad-local-seed42-*")
    assert run_cli("--promote-reference", str(oracle42), "--references", "refs", cwd=root).returncode == 0
    ref_file = root / "refs" / "Oracle" / "rad" / "run_1.jsonl"
    lines = [json.loads(line) for line in ref_file.read_text().splitlines()]
    lines[0]["chosen"] = "B" if lines[0]["chosen"] == "A" else "A"  # rad_0001: the reference now disagrees
    ref_file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = run_cli("--report", "results", "--out", "report/report.html", "--references", "refs", cwd=root)
    assert out.returncode == 0, out.stderr
    assert "Wrote report/report.html" in out.stdout and "file://" in out.stdout
    return root


def metrics_of(root: Path, model: str, task: str = "rad") -> list[dict]:
    return [json.loads((d / "metrics.json").read_text()) for d in (root / "results").glob(f"{model}-{task}-*")]


def test_the_report_is_one_file_that_asks_nothing_of_the_network(workspace):
    html = (workspace / "report" / "report.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "<link" not in html and "<script src" not in html and "@import" not in html
    assert "default-src 'none'" in html  # the page's own policy forbids any request the tests did not foresee
    assert 'src="../archive/rad/audio/' not in html  # clips are addressed by the browser data, relative to the page
    assert '"../archive/rad/audio/rad_0001_1.wav"' in html


def test_every_run_has_its_psychometric_fit_in_metrics(workspace):
    for metrics in metrics_of(workspace, "Oracle") + metrics_of(workspace, TUNED):
        fit = metrics["psychometric"]
        assert fit["levels"] == [1, 2, 3, 4, 5] and fit["guess"] == 0.5 and fit["criterion"] == 0.75
        assert sum(fit["n"]) == metrics["scored"]["n"] and sum(fit["correct"]) == metrics["scored"]["correct"]


def test_an_empty_results_folder_is_one_line_naming_the_fix(tmp_path):
    (tmp_path / "results").mkdir()
    out = run_cli("--report", cwd=tmp_path)
    assert out.returncode == 2 and "no finished runs under results" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "report.html").exists()


# ---- in a real browser ----

@pytest.fixture
def report(browser, workspace):
    page = Page(browser, workspace / "report" / "report.html")
    yield page
    page.page.close()


def test_the_leaderboard_has_a_row_per_model_with_the_runs_numbers(report, workspace):
    rows = {row[0]: row for row in report.cells("#leaderboard")}
    assert set(rows) == {"Oracle", "Random", "Always-A", BASE, TUNED}
    for model in ("Oracle", "Random", "Always-A"):
        accuracies = [100 * m["scored"]["accuracy"] for m in metrics_of(workspace, model)]
        mean, std = statistics.fmean(accuracies), statistics.stdev(accuracies)
        assert rows[model][1] == "all" and rows[model][2].startswith(f"{mean:.1f} ± {std:.1f}")
    assert rows[TUNED][1] == "eval"
    [lora] = report.cells("#lora")
    assert lora[:2] == [TUNED, BASE]
    tuned, base = (statistics.fmean(m["scored"]["accuracy"] for m in metrics_of(workspace, x)) for x in (TUNED, BASE))
    assert f"+{100 * (tuned - base):.1f}" in lora[2]


def test_the_psychometric_panels_and_thresholds_are_drawn(report):
    assert report.page.locator("svg.psy").count() == 5  # five models (rows) x one attribute
    assert report.page.locator("svg.psy polyline.fit").count() == 5
    thresholds = {row[0]: row[1] for row in report.cells("#thresholds")}
    assert thresholds[TUNED + " (eval)"].startswith(">5") or float(thresholds[TUNED + " (eval)"].split()[0]) > 3
    assert {row[0] for row in report.cells("#diag-catch")} == {"Oracle", "Random", "Always-A", BASE, TUNED}


@pytest.mark.skipif(not HAS_ICL, reason="the AudioICL pack needs espeak-ng (scripts/setup_env.sh installs it)")
def test_the_kshot_curves_put_every_model_on_one_axis(report):
    panel = report.page.locator("svg.kshot[data-task='AudioCount']")
    assert panel.count() == 1 and panel.locator("polyline.series").count() == 2
    rows = report.cells("#audioicl")
    assert {(r[0], r[1]) for r in rows} == {("Oracle [first 4]", "AudioCount"), ("Random [first 4]", "AudioCount")}


@pytest.mark.skipif(not HAS_ICL, reason="the AudioICL pack needs espeak-ng (scripts/setup_env.sh installs it)")
def test_kshot_panels_have_intervals_and_chance_and_episode_clips_are_named_by_their_demos(report, workspace):
    records = [json.loads(line) for run in (workspace / "results").glob("Oracle-AudioCount-*")
               for line in (run / "responses.jsonl").read_text().splitlines()]
    panel = report.page.locator("svg.kshot[data-task='AudioCount']")
    chance = float(panel.locator("line.chance").get_attribute("data-chance"))
    assert chance == pytest.approx(1 / len({r["gt"] for r in records}), abs=1e-6)
    assert panel.locator("line.interval").count() == 4  # a 95% interval per model and k, clustered by episode
    page = report.page
    page.select_option("#f-model", "Oracle")
    page.select_option("#f-task", "AudioCount k=3")
    page.click("#answers tbody tr:first-child")
    shown = page.inner_text("#detail h3").split(" · ")
    record = next(r for r in records if r["id"] == shown[0] and r["shots"] == 3 and f"seed {r['seed']}" == shown[3])
    demos = re.findall(r"^\[Demo Audio \d\] <audio \d+> Label: (.*)$", record["prompt"], re.M)
    captions = page.eval_on_selector_all("#detail figcaption", "f => f.map(c => c.textContent)")
    assert len(demos) == 3 and captions == [f"demo {n}: {label}" for n, label in enumerate(demos, 1)] + ["query"]
    assert report.errors == []


def test_filters_change_what_is_shown_and_a_question_plays_its_clips(report, workspace, tmp_path):
    page = report.page
    total = int(re.search(r"of (\d+)", report.count()).group(1))
    page.select_option("#f-model", "Random")
    assert report.count() == f"Showing 1–50 of {46 + 16 * HAS_ICL} answers"  # AudioICL: 4 episodes x 2 k x 2 seeds
    page.select_option("#f-task", "rad")
    assert report.count() == "Showing 1–46 of 46 answers"  # 23 questions x 2 seeds
    assert {(row[1], row[2]) for row in report.cells("#answers")} == {("Random", "rad")}
    page.select_option("#f-correct", "wrong")
    assert {row[9] for row in report.cells("#answers")} == {"wrong"}
    page.select_option("#f-model", "")
    page.select_option("#f-task", "")
    page.select_option("#f-correct", "")
    page.check("#f-ref")
    assert report.count() == "Showing 1–1 of 1 answers"
    [row] = report.cells("#answers")
    assert row[:4] == ["rad_0001", "Oracle", "rad", "42"]
    assert page.locator("#answers td.disagree").count() == 1
    page.uncheck("#f-ref")
    page.check("#f-flips")
    flips = report.cells("#answers")
    assert flips and all(r[11] == "flips" for r in flips) and int(re.search(r"of (\d+)", report.count()).group(1)) < total
    page.uncheck("#f-flips")
    page.select_option("#f-model", "Oracle")
    page.click("#answers tbody tr:first-child")
    page.wait_for_function("() => [...document.querySelectorAll('#detail audio')].every(a => a.readyState >= 1)")
    assert page.locator("#detail audio").count() == 2
    assert "rules extractor" in page.inner_text("#detail")
    # the question's level and its benchmark's own facets (AcousticBench: kind, split), named as the benchmark names them
    assert re.search(r"Level / kind / split\s+\d+ / scored / (train|eval)", page.inner_text("#detail"))
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)  # looked at by a person before release
    assert report.errors == []
    assert all(url.startswith("file://") for url in report.requests), report.requests
    assert any(url.endswith("/archive/rad/audio/rad_0001_1.wav") for url in report.requests)


def test_with_embedded_audio_the_file_plays_its_clips_anywhere(browser, workspace, tmp_path):
    out = run_cli("--report", "results", "--out", str(tmp_path / "built" / "r.html"), "--embed-audio", cwd=workspace)
    assert out.returncode == 0, out.stderr
    alone = tmp_path / "elsewhere" / "r.html"
    alone.parent.mkdir()
    shutil.move(tmp_path / "built" / "r.html", alone)  # nothing beside it: no archive to link to
    report = Page(browser, alone)
    report.page.select_option("#f-model", "Always-A")
    report.page.click("#answers tbody tr:first-child")
    report.page.wait_for_function("() => [...document.querySelectorAll('#detail audio')].every(a => a.readyState >= 1)")
    assert report.errors == []
    assert all(url == report.url or url.startswith("data:") for url in report.requests), report.requests
    report.page.close()


# ---- comparing models, sorting, export, stepping, physical parameters, A then B ----

def scored_correct(root: Path, model: str, task: str = "rad") -> dict[tuple[str, int], bool]:
    """(question id, seed) -> right, over the scored questions of the model's run folders."""
    out = {}
    for run in (root / "results").glob(f"{model}-{task}-*"):
        for line in (run / "responses.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r["kind"] == "scored":
                out[(r["id"], r["seed"])] = bool(r["correct"])
    return out


def read_download(page, button: str) -> list[list[str]]:
    import csv
    import io

    with page.expect_download() as info:
        page.click(button)
    return list(csv.reader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))


def squeezed(rows: list[list[str]]) -> list[list[str]]:
    return [[" ".join(c.split()) for c in row] for row in rows]


def by_question(answers: dict[tuple[str, int], bool]) -> dict[str, float]:
    """question id -> the share of its seeds answered right."""
    seeds: dict[str, list[bool]] = {}
    for (question, _), right in answers.items():
        seeds.setdefault(question, []).append(right)
    return {q: sum(v) / len(v) for q, v in seeds.items()}


@pytest.mark.slow  # a browser through every view of two models; the inner loop keeps the page and its filters
def test_two_models_compared_tables_sorted_and_exported_and_answers_stepped(report, workspace):
    from scipy.stats import permutation_test

    page = report.page
    oracle, rand = by_question(scored_correct(workspace, "Oracle")), by_question(scored_correct(workspace, "Random"))
    questions = sorted(oracle.keys() & rand.keys())
    diffs = [oracle[q] - rand[q] for q in questions]
    a_better, b_better = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    assert len(questions) == 20 and a_better > 0  # 20 scored questions, each over its 2 seeds; Random misses some
    page.select_option("#p-a", label="Oracle")
    page.select_option("#p-b", label="Random")
    row = next(r for r in report.cells("#paired") if r[0] == "rad")
    assert row[1:3] == ["20", "42, 43"] and row[10:] == [str(a_better), str(b_better), "0", "0"]
    assert float(row[9]) > 0  # the difference detectable at 80% power with these questions and seeds
    mean = statistics.fmean(diffs)
    assert row[5].startswith(f"{100 * mean:+.1f} [")  # A - B in points over questions, with its interval
    exact = permutation_test((diffs,), statistics.fmean, permutation_type="samples", n_resamples=10**7).pvalue
    assert float(row[6]) == pytest.approx(exact, rel=5e-3)  # a sign flip per question, not per seed
    note = page.inner_text("#p-note")
    assert f"20 questions{' and 8 episodes' * HAS_ICL} paired by id" in note  # AudioCount: 4 episodes x 2 k
    assert "never counted as new pairs" in note and "Benjamini-Hochberg" in note
    listed = page.locator("#p-lists details[data-task='rad'] .discordant").first.locator("li")
    assert listed.count() == a_better
    page.click("#p-lists details[data-task='rad'] summary")
    first = page.inner_text("#p-lists details[data-task='rad'] li >> nth=0").split(":")[0]
    listed.first.locator("a", has_text="A's").first.click()
    assert page.inner_text("#detail h3").startswith(f"{first} · Oracle · rad")
    page.select_option("#p-a", label="Random")
    page.select_option("#p-b", label="Oracle")
    swapped = next(r for r in report.cells("#paired") if r[0] == "rad")
    assert swapped[3:5] == row[4:2:-1] and swapped[6:10] == row[6:10] and swapped[10:12] == row[11:9:-1]
    assert swapped[5].startswith(f"{-100 * mean:+.1f} [")

    # sorting: numbers as numbers, a second click reverses; the CSV is the table in the order shown
    column = ["Model", "Split"].__len__()  # the first task's column (rad) of the leaderboard
    page.click(f"#leaderboard th >> nth={column}")
    ascending = [float(r[column].split()[0]) for r in report.cells("#leaderboard")]
    assert ascending == sorted(ascending) and ascending[0] < ascending[-1]
    page.click(f"#leaderboard th >> nth={column}")
    shown = report.cells("#leaderboard")
    assert [float(r[column].split()[0]) for r in shown] == sorted(ascending, reverse=True)
    exported = read_download(page, "button.csv[data-table='leaderboard']")
    header = [" ".join(h.split()) for h in page.eval_on_selector_all("#leaderboard th", "t => t.map(h => h.textContent)")]
    assert exported == [header] + squeezed(shown)

    if HAS_ICL:  # 20 questions on rad, 4 episodes on each AudioCount k: as text '20' would sort before '4'
        page.click("#paired th >> text=Questions paired")
        assert [r[1] for r in report.cells("#paired")] == ["4", "4", "20"]

    page.select_option("#f-model", "Random")
    page.select_option("#f-task", "rad")
    page.click("#answers th >> text=Id")
    page.click("#answers th >> text=Id")  # descending
    ids = [r[0] for r in report.cells("#answers")]
    assert ids == sorted(ids, reverse=True) and len(ids) == 46
    assert read_download(page, "button.csv[data-table='answers']")[1:] == squeezed(report.cells("#answers"))

    # the detail opens beside the list; j and k step through it
    page.click("#answers tbody tr:nth-child(2)")
    table, detail = page.locator(".browse .list").bounding_box(), page.locator("#detail").bounding_box()
    assert detail["x"] >= table["x"] + table["width"] and detail["y"] < table["y"] + table["height"]  # beside, not below
    second = page.get_attribute("#answers tbody tr:nth-child(2)", "data-index")
    assert page.get_attribute("#detail", "data-index") == second
    page.keyboard.press("j")
    assert page.get_attribute("#detail", "data-index") == page.get_attribute("#answers tbody tr:nth-child(3)", "data-index")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("k")
    assert page.get_attribute("#answers tr.sel", "data-index") == page.get_attribute("#answers tbody tr:nth-child(1)", "data-index")
    assert report.errors == []


@pytest.fixture(scope="module")
def physical(tmp_path_factory) -> Path:
    """A report (clips embedded) of Oracle on three real pitch questions, whose meta holds each clip's f0."""
    from acousticbench.benchmarks.acoustic.pack.build import build_tasks
    from acousticbench.benchmarks.acoustic.pack import write_manifest, write_questions
    from acousticbench.tools.report import build_report

    root = tmp_path_factory.mktemp("physical")
    questions = build_tasks(root / "archive", ["pit"], workers=1, numbers={1, 2, 3})["pit"]
    digest = write_questions(root / "archive", "pit", questions)
    write_manifest(root / "archive", "real-pitch-questions", "0", {"pit": {"title": "Pitch", "clips": 2, "n_scored": 3,
                                                                           "n_diagnostic": 0}}, {"pit/questions.jsonl": digest})
    out = run_cli("--model", "Oracle", "--task", "pit", "--seeds", "42", "--archive", "archive", cwd=root)
    assert out.returncode == 0, out.stderr
    build_report([root / "results"], root / "report.html", embed_audio=True)
    return root


@pytest.mark.slow  # its own run and report, and two clips really played
def test_the_detail_shows_each_clips_parameters_and_plays_a_then_b_with_the_gap(browser, physical):
    from acousticbench.models.limits import MERGE_GAP_S

    [first] = [json.loads(line) for line in (physical / "archive" / "pit" / "questions.jsonl").read_text().splitlines()][:1]
    report = Page(browser, physical / "report.html")
    page = report.page
    page.click("#answers tbody tr:first-child")
    rows = {r[0]: r[1:] for r in report.cells("#detail table.params")}
    assert rows["f0 (Hz)"] == [f"{c['f0_hz']:.4g}" for c in first["meta"]["clips"]]
    assert rows["difference asked about (semitones)"] == [f"{first['meta']['step']:.4g}"]
    assert float(page.get_attribute("#play-ab", "data-gap")) == MERGE_GAP_S
    page.evaluate("""() => { window.heard = [];
      document.querySelectorAll('#detail audio').forEach((a, n) => ['play', 'ended'].forEach(e =>
        a.addEventListener(e, () => window.heard.push([n, e, performance.now(), a.currentTime])))); }""")
    page.click("#play-ab")
    page.wait_for_function("() => window.heard.some(([n, e]) => n === 1 && e === 'play')", timeout=15_000)
    heard = page.evaluate("window.heard")
    assert [(n, e) for n, e, _, _ in heard[:3]] == [(0, "play"), (0, "ended"), (1, "play")]
    silence_ms = heard[2][2] - heard[1][2]
    assert 1000 * MERGE_GAP_S - 20 <= silence_ms < 1000 * MERGE_GAP_S + 600 and heard[2][3] < 0.1  # B from its start
    assert report.errors == [] and all(u == report.url or u.startswith("data:") for u in report.requests)
    page.close()
