"""The HTML report of two recordings (the FEM workload, anomalous then --fixed) in a real
browser: the per size and region rows, the totals and the stack trace types that
disappeared equal `heapscope diff --stacks --format json`; the differential flame graph
is B's paths with their change from A."""
import json

import pytest

from helpers.browser import browser, open_report, shoot, shots  # noqa: F401 (fixtures)

CELLS = "16"


@pytest.fixture(scope="module")
def fem(native, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("html-diff")
    exe = native / "bin" / "hs-wl-fem-temporaries"
    heapscope("record", "-o", root / "anomalous", "--sizes", "24", "--", exe, "--cells", CELLS)
    heapscope("record", "-o", root / "fixed", "--sizes", "24", "--", exe, "--cells", CELLS, "--fixed")
    heapscope("html", root / "anomalous", root / "fixed", "-o", root / "diff.html")
    doc = json.loads(heapscope("diff", root / "anomalous", root / "fixed", "--stacks",
                               "--format", "json").stdout)
    return root, doc


@pytest.fixture(scope="module")
def page(browser, fem):  # noqa: F811
    report = open_report(browser, fem[0] / "diff.html", "diff")
    yield report
    report.close()


def number(text):
    return int(text.replace(",", "").replace("+", ""))


def test_rows_and_totals_equal_heapscope_diff(page, fem, shots):  # noqa: F811
    _, doc = fem
    more = page.page.locator("#diff .hs-diff-sizes + .hs-more button")
    if more.count():
        more.click()
    rows = [r.split("\t") for r in page.page.locator("#diff .hs-diff-sizes tbody tr").all_inner_texts()]
    shown = [(r[0], number(r[1]), number(r[2]), number(r[3]), r[7]) for r in rows]
    assert shown == [(r["region"], r["size"], r["count_a"], r["count_b"], r["status"])
                     for r in doc["sizes"] if r["delta"]]
    local24 = next(s for s in shown if s[:2] == ("local", 24))
    assert local24[2] > 0 and local24[3:] == (0, "gone")     # the fix removed them
    t = doc["total"]
    assert f"{t['count_a']:,} → {t['count_b']:,}" in page.page.locator("#hs-diff-total").inner_text()
    shoot(page, shots, "diff")
    assert page.errors == [] and page.requests == []


def test_stack_types_that_went_and_the_differential_flame_graph(page, fem):
    _, doc = fem
    gone = [s for s in doc["stacks"] if s["status"] == "gone"]
    rows = [r.split("\t") for r in page.page.locator("#diff tr[data-status='gone']").all_inner_texts()]
    assert gone and [(number(r[0]), r[1], number(r[2]), number(r[3])) for r in rows] == \
        [(s["size"], s["region"], s["count_a"], 0) for s in gone[:10]]
    root = page.eval("""() => { const g = [...document.querySelectorAll('#hs-diff-flame g.frame')]
        .find(g => d3.select(g).datum().depth === 0); const d = d3.select(g).datum().data;
        return [d.a, d.b, d.delta]; }""")
    a = sum(s["count_a"] for s in doc["stacks"])
    b = sum(s["count_b"] for s in doc["stacks"])
    assert root == [a, b, b - a] and a > b
