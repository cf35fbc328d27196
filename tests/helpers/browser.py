"""A real browser for the HTML report's tests: Debian's chromium driven by Playwright.

    page = open_report(browser, path, shots)   # offline, console watched, sections drawn
    shoot(page, shots, "sizes")                # a screenshot of one section, for review

Playwright (pip `playwright`) talks to the chromium Debian installs (`apt-get install
chromium`, /usr/bin/chromium): no browser is downloaded (`playwright install` is never
run). Each page opens in a context with the network off, and every request other than
the file itself is counted, so a page that asks for anything fails its test.
Screenshots go to the pytest temporary folder (html-screenshots/), or to
$HEAPSCOPE_SCREENSHOTS when set.
"""
import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]
VIEWPORT = {"width": 1300, "height": 900}


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is missing (pip install playwright; scripts/setup.sh installs it)")
    assert shutil.which(CHROMIUM) or os.path.exists(CHROMIUM), \
        "chromium is missing (apt-get install chromium; scripts/setup.sh installs it)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    where = os.environ.get("HEAPSCOPE_SCREENSHOTS")
    path = Path(where) if where else tmp_path_factory.getbasetemp() / "html-screenshots"
    path.mkdir(parents=True, exist_ok=True)
    return path


class Report:
    """An opened page, with what its console said and the requests it tried."""

    def __init__(self, page, context, name):
        self.page, self.context, self.name = page, context, name
        self.errors, self.requests = [], []

    def eval(self, script, arg=None):
        return self.page.evaluate(script, arg)

    def close(self):
        self.context.close()


def open_report(browser, path, name: str = "") -> Report:
    context = browser.new_context(viewport=VIEWPORT, offline=True)
    page = context.new_page()
    report = Report(page, context, name or Path(path).stem)
    url = Path(path).resolve().as_uri()
    page.on("console", lambda m: m.type in ("error", "warning") and report.errors.append(
        f"console {m.type}: {m.text}"))
    page.on("pageerror", lambda e: report.errors.append(f"page error: {e}"))
    page.on("request", lambda r: r.url != url and not r.url.startswith(("data:", "blob:"))
            and report.requests.append(r.url))
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=30000)
    page.wait_for_timeout(800)       # the flame graph's and charts' transitions
    return report


def shoot(report: Report, shots: Path, section: str) -> Path:
    out = shots / f"{report.name}-{section}.png"
    # the sticky page header would be drawn over the section as it scrolls into view
    report.page.add_style_tag(content="header { position: static !important; }")
    report.page.locator(f"#{section}").screenshot(path=str(out))
    assert out.stat().st_size > 1000
    return out
