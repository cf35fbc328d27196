"""`heapscope bench --html FILE` in a real browser: each configuration's medians, intervals
and ratios in the page are those of the bench document (--format json of the same run),
and each metric has its chart."""
import json

import pytest

from helpers.browser import browser, open_report, shoot, shots  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def bench(native, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("html-bench")
    heapscope("bench", "-n", "3", "--warmup", "0", "--allocators", "glibc,hsmalloc", "--no-progress",
              "--html", root / "bench.html", "--format", "json", "-o", root / "bench.json",
              "--", native / "bin" / "hs-wl-hot-odd", "--rounds", "2000")
    return root


def test_bench_page_shows_the_documents_medians_and_ratios(browser, bench, shots):  # noqa: F811
    doc = json.loads((bench / "bench.json").read_text())
    report = open_report(browser, bench / "bench.html", "bench")
    try:
        titles = report.page.locator("#bench .hs-bench thead th").all_inner_texts()
        rows = [r.split("\t") for r in report.page.locator("#bench .hs-bench tbody tr").all_inner_texts()]
        configs = doc["commands"][0]["configs"]
        assert [r[0] for r in rows] == [c["name"] for c in configs] == ["glibc", "hsmalloc"]
        wall = titles.index("wall s median")
        for row, c in zip(rows, configs):
            s = c["stats"]["wall"]
            assert float(row[wall]) == pytest.approx(s["median"], rel=1e-3)
            lo, hi = (float(x) for x in row[wall + 1].strip("[]").split(","))
            assert (lo, hi) == (pytest.approx(s["median_ci"][0], rel=1e-3), pytest.approx(s["median_ci"][1], rel=1e-3))
            ratio = c["ratios"]["wall"]["value"]
            assert float(row[wall + 2].split()[0]) == pytest.approx(ratio, abs=5e-4)
        charts = report.page.locator("#bench .hs-chart")
        assert charts.count() == len(configs[0]["stats"])
        drawn = report.eval("() => document.querySelector('#bench .hs-chart').uplot.data[1]")
        assert drawn == [c["stats"]["wall"]["median"] for c in configs]
        shoot(report, shots, "bench")
        assert report.errors == [] and report.requests == []
    finally:
        report.close()
