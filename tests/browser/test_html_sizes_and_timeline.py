"""The HTML report of the FEM workload in a real browser: the overview, the size x region
table and hot sizes equal `heapscope report --format json` and the counts the workload is
known to make, the timeline's peaks equal `heapscope timeline --format json`, and the
page loads nothing and logs no error with the network off."""
import json

import pytest

from helpers.browser import browser, open_report, shoot, shots  # noqa: F401 (fixtures)

CELLS = 16
E = 2 * CELLS * CELLS   # triangles


@pytest.fixture(scope="module")
def fem(native, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("html-fem")
    heapscope("record", "-o", root / "rec", "--sizes", "12", "--",
              native / "bin" / "hs-wl-fem-temporaries", "--cells", str(CELLS), "--subdomains", "4")
    out = heapscope("html", root / "rec")          # default: inside the recording's directory
    assert out.stdout.strip() == f"wrote {root / 'rec' / 'heapscope-report.html'}"
    return root


@pytest.fixture(scope="module")
def page(browser, fem):  # noqa: F811
    report = open_report(browser, fem / "rec" / "heapscope-report.html", "fem")
    yield report
    report.close()


def test_the_page_loads_nothing_and_logs_no_error_offline(page, shots):  # noqa: F811
    for section in ("overview", "sizes", "stacks", "timeline"):
        shoot(page, shots, section)
        assert page.page.locator(f"#{section} .hs-error").count() == 0
    assert page.errors == [] and page.requests == []


def test_size_table_cells_equal_the_report_and_the_known_counts(page, fem, heapscope):
    doc = json.loads(heapscope("report", fem / "rec", "--format", "json", "--top", "0").stdout)
    more = page.page.locator("#hs-size-table button", has_text="show all")
    if more.count():
        more.click()
    cells = page.eval("""() => [...document.querySelectorAll('#hs-size-table span.hs-heat')]
        .map(s => [Number(s.closest('tr').dataset.size), s.dataset.region, Number(s.dataset.count)])""")
    shown = {(size, region): n for size, region, n in cells}
    assert shown == {(row["size"], r): row["counts"][r] for row in doc["sizes"] for r in doc["regions"]}
    for region, size, expected in [("split", 12, 2 * E), ("local", 12, E), ("post", 12, E),
                                   ("local", 72, 2 * E), ("post", 72, E), ("local", 32, 4 * E)]:
        assert shown[(size, region)] == expected, (region, size)
    # the hot sizes of region "local", most allocations first, with their share
    rows = page.page.locator("#sizes .hs-hot-region[data-region='local'] tbody tr").all_inner_texts()
    hot = [[c.strip() for c in r.split("\t")] for r in rows]
    assert [int(h[0].replace(",", "")) for h in hot] == [h["size"] for h in doc["hot_sizes"]["local"]]
    assert [int(h[1].replace(",", "")) for h in hot] == [h["count"] for h in doc["hot_sizes"]["local"]]


def test_sorting_the_size_table_by_a_region(page, fem, heapscope):
    doc = json.loads(heapscope("report", fem / "rec", "--format", "json", "--top", "0").stdout)
    top = max(doc["sizes"], key=lambda row: (row["counts"]["local"], -row["size"]))
    page.page.locator("#hs-size-table th", has_text="local").click()   # numbers: largest first
    first = page.eval("() => document.querySelector('#hs-size-table tbody tr').dataset.size")
    counts = page.eval("""() => [...document.querySelectorAll(
        "#hs-size-table span.hs-heat[data-region='local']")].map(s => Number(s.dataset.count))""")
    assert counts == sorted(counts, reverse=True)
    assert (int(first), counts[0]) == (top["size"], top["counts"]["local"])


def test_overview_totals_equal_the_report(page, fem, heapscope):
    doc = json.loads(heapscope("report", fem / "rec", "--format", "json", "--top", "0").stdout)
    rows = page.page.locator("#overview .hs-region-totals tbody tr").all_inner_texts()
    shown = {c[0]: (int(c[1].replace(",", "")), int(c[2].replace(",", "")))
             for c in (r.split("\t") for r in rows)}
    assert shown == {r: (t["count"], t["bytes"]) for r, t in doc["totals"].items()}
    facts = page.page.locator("#overview dl").inner_text()
    assert "hs-wl-fem-temporaries --cells 16 --subdomains 4" in facts
    total = sum(t["count"] for t in doc["totals"].values())
    assert f"\n{total:,} (" in facts and f"{len(doc['regions'])} regions" in facts
    assert ", 1 thread" in facts and "1 threads" not in facts   # the FEM workload: one thread


def test_timeline_peaks_and_regions_equal_the_timeline_document(page, fem, heapscope):
    doc = json.loads(heapscope("timeline", fem / "rec", "--format", "json").stdout)
    proc = doc["processes"][0]
    rows = page.page.locator("#timeline .hs-peaks tbody tr").all_inner_texts()
    shown = {c[0]: int(c[2].replace(",", "")) for c in (r.split("\t") for r in rows)}
    # RSS and PSS are the program's, the recorder's own memory a series of its own
    assert proc["recorder_measured"]
    names = {"heap": "heap in use", "rss": "RSS, program", "pss": "PSS, program",
             "heap_mpi": "heap, MPI", "recorder": "recorder's own memory"}
    assert shown == {names[k]: v["bytes"] for k, v in proc["peaks"].items() if v}
    # the exact heap peak (every allocation and free) is said apart from the samples'
    exact = page.page.locator("#timeline .hs-heap-peaks")
    assert exact.count() == (1 if proc["heap_peaks"] else 0)
    assert not proc["heap_peaks"] or proc["heap_peaks"]["heap"] >= proc["peaks"]["heap"]["bytes"]
    regions = page.page.locator("#timeline .hs-regions tbody tr").all_inner_texts()
    assert [r.split("\t")[0] for r in regions] == [s["region"] for s in proc["regions"]][:40]
    assert {"split", "local", "reduce", "post"} <= {s["region"] for s in proc["regions"]}
    # uPlot drew one chart with the five series
    legend = page.page.locator("#timeline .u-legend .u-series .u-label").all_inner_texts()
    assert legend == ["seconds", "heap in use", "heap, MPI", "RSS, program", "PSS, program",
                      "recorder's own memory"]
