"""A report opened in a real headless chromium (where one is installed): the page's console errors, page errors and
requests recorded, its tables read as a person sees them."""
from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("chromium is not installed (apt-get install chromium; scripts/setup_env.sh does it)")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM))
        yield browser
        browser.close()


class Page:
    """A page opened on the report, with every console message, page error and request it caused."""

    def __init__(self, browser, path: Path):
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)
        self.page.wait_for_selector("body[data-ready='1']")

    def cells(self, selector: str) -> list[list[str]]:
        return self.page.eval_on_selector_all(selector + " tbody tr",
                                              "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))")

    def count(self) -> str:
        return self.page.inner_text("#count")
