"""The HTML diff over several runs per side (`heapscope diff --before ... --after ...
--html`, tests/programs/diff_runs.c) in a real browser: the runs paragraph, each side's
mean with its lowest..highest run, and "within run-to-run variation" where they meet."""
import pytest

from helpers.browser import browser, open_report  # noqa: F401 (fixtures)

VARIATION = "within run-to-run variation"


@pytest.fixture(scope="module")
def page(browser, build, heapscope, tmp_path_factory):  # noqa: F811
    exe = build("diff_runs.c")
    root = tmp_path_factory.mktemp("html-diff-runs")
    args = []
    for side, seeds, mode in (("--before", (0, 1, 3), ()), ("--after", (1, 2, 4), ("regressed",))):
        for s in seeds:
            heapscope("record", "-o", root / f"{side[2:]}{s}", "--sizes", "32,128", "--", exe, str(s), *mode)
            args += [side, root / f"{side[2:]}{s}"]
    heapscope("diff", *args, "--stacks", "--html", root / "runs.html")
    report = open_report(browser, root / "runs.html", "diff")
    yield report
    report.close()


def test_rows_show_the_spread_of_the_runs(page):
    runs = page.page.locator("#hs-diff-runs").inner_text()
    assert "Runs: A 3, B 3" in runs and "A 18,333 (18,000..19,000), B 22,333 (22,000..23,000): more" in runs
    rows = [r.split("\t") for r in page.page.locator("#diff .hs-diff-sizes tbody tr").all_inner_texts()]
    assert [(r[1], r[2], r[3], r[7]) for r in rows] == [
        ("128", "3,000 (3,000..3,000)", "6,000 (6,000..6,000)", "more"),
        ("32", "10,333 (10,000..11,000)", "11,333 (11,000..12,000)", VARIATION)]
    within = page.page.locator(f"#diff tr[data-status='{VARIATION}']").all_inner_texts()
    assert len(within) == 1 and "noisy" in within[0]
    assert page.errors == [] and page.requests == []
