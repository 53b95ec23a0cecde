"""The report of a large results folder: the page holds the tables, curves and the paired view and no answer; each
model's answers on each task lie on a page of their own beside it, the same browser over that cell's seeds, written
again only where its runs changed; opened in a real headless chromium where one is installed."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import write_tiny_pack
from harness_cli import run_cli
from report_page import Page, browser  # noqa: F401 (a fixture)

from acousticbench.tools.report import build_report
from acousticbench.tools.report.pages import folder_of


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """results/: Oracle, Random and Always-A on rad over two seeds; report/ holds both reports of it."""
    root = tmp_path_factory.mktemp("pages")
    archive = write_tiny_pack(root / "archive", "rad", 20)
    out = run_cli("--model", "Oracle,Random,Always-A", "--task", "rad", "--seeds", "42,43", "--judge", "rules",
                  "--archive", str(archive), cwd=root)
    assert out.returncode == 0, out.stderr
    build_report([root / "results"], root / "report" / "one.html")
    build_report([root / "results"], root / "report" / "paged.html", inline_answers=10)
    return root


def test_past_the_limit_the_answers_lie_on_a_page_per_model_and_task(workspace):
    one = (workspace / "report" / "one.html").read_text(encoding="utf-8")
    paged = (workspace / "report" / "paged.html").read_text(encoding="utf-8")
    pages = sorted(folder_of(workspace / "report" / "paged.html").glob("*.html"))
    assert [p.name.split("-rad-")[0] for p in pages] == ["Always-A", "Oracle", "Random"]
    assert 'id="answers"' in one and 'id="answers"' not in paged and len(paged) < len(one)
    for page in pages:  # each a whole report page of its own: the browser over both seeds of its cell
        text = page.read_text(encoding="utf-8")
        assert 'id="answers"' in text and "default-src 'none'" in text
        assert 'href="../paged.html"' in text
    # the tables and the paired view's figures are the same in both (the paged one's read from the results index)
    for section in ("s-leaderboard", "s-psychometric", "s-paired"):
        assert re.search(rf'<section id="{section}">.*?</section>', one, re.S).group(0) in paged
    assert data_of(one)["paired"] == data_of(paged)["paired"] and data_of(paged)["records"]["run"] == []


def data_of(page: str) -> dict:
    return json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1).replace("<\\/", "</"))


def test_a_cell_page_is_written_again_only_where_its_runs_changed(workspace):
    paged = workspace / "report" / "paged.html"
    pages = {p.name: p.stat().st_mtime_ns for p in folder_of(paged).glob("*.html")}
    build_report([workspace / "results"], paged, inline_answers=10)
    assert {p.name: p.stat().st_mtime_ns for p in folder_of(paged).glob("*.html")} == pages
    [run] = (workspace / "results").glob("Random-rad-local-seed43-*")
    lines = (run / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["response"] = "I would say A."
    (run / "responses.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    build_report([workspace / "results"], paged, inline_answers=10)
    changed = {p.name for p in folder_of(paged).glob("*.html") if p.stat().st_mtime_ns != pages[p.name]}
    assert [name.split("-rad-")[0] for name in changed] == ["Random"]
    random_page = next(folder_of(paged).glob("Random-*.html")).read_text(encoding="utf-8")
    assert "I would say A." in random_page


def test_the_paged_report_opens_and_links_each_side_to_its_page(workspace, browser):
    page = Page(browser, workspace / "report" / "paged.html")
    assert page.errors == [] and all(url.startswith("file:") for url in page.requests)
    rows = page.cells("#answer-pages")
    assert sorted(row[0] for row in rows) == ["Always-A", "Oracle", "Random"]
    assert {row[2] for row in rows} == {"2"}  # both seeds of each model on one page
    assert page.page.locator("#paired tbody tr").count() >= 1
    links = page.page.eval_on_selector_all("#p-lists a", "links => links.map(a => a.getAttribute('href'))")
    assert links and all(link.startswith("paged-answers/") for link in links)
    first = links[0]
    cell = Page(browser, workspace / "report" / first)
    assert cell.errors == []
    assert cell.count().endswith(" of 46 answers")  # 20 scored and 3 diagnostic questions over two seeds
