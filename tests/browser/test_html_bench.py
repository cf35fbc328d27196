"""`heapscope bench --html FILE` in a real browser: each configuration's medians, intervals
and ratios in the page are those of the bench document (--format json of the same run),
and each metric has its chart; with --profilers (8 configurations: plain, five recorder
modes, heaptrack, Massif) the section is titled so and every chart's configuration
names are legible: each label's text box is whole and overlaps no other text of its
chart (a geometric check of the boxes the browser laid out, no screenshot compared)."""
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
        drawn = report.eval("() => document.querySelector('#bench .hs-chart').medians")
        assert drawn == [c["stats"]["wall"]["median"] for c in configs]
        assert report.eval("() => document.querySelector('#bench h2').textContent") == \
            "Allocator comparison"
        shoot(report, shots, "bench")
        assert report.errors == [] and report.requests == []
    finally:
        report.close()


# Every text box of a chart: the configuration labels (their whole text, even where the
# cell cuts it), the values, the scale and the title; whether a label is cut.
TEXT_BOXES = """() => [...document.querySelectorAll('#bench .hs-chart')].map(chart => {
  const texts = [];
  const walker = document.createTreeWalker(chart, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.textContent.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const r = range.getBoundingClientRect();
    texts.push({text: node.textContent, left: r.left, right: r.right, top: r.top,
                bottom: r.bottom, label: !!node.parentElement.closest('.hs-ci-label')});
  }
  const labels = [...chart.querySelectorAll('.hs-ci-label')].map(l =>
    ({text: l.textContent, cut: l.scrollWidth > l.clientWidth}));
  return {title: chart.dataset.title, texts, labels};
})"""


def overlap(a, b):
    return min(a["right"], b["right"]) - max(a["left"], b["left"]) > 0.5 and \
        min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 0.5


@pytest.fixture(scope="module")
def profilers(native, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("html-bench-profilers")
    heapscope("bench", "--profilers", "-n", "1", "--warmup", "0", "--no-progress",
              "--html", root / "bench.html", "--format", "json", "-o", root / "bench.json",
              "--", native / "bin" / "hs-wl-hot-odd", "--rounds", "200")
    return root


def test_profiler_page_is_titled_so_and_its_eight_labels_are_legible(browser, profilers, shots):  # noqa: F811
    doc = json.loads((profilers / "bench.json").read_text())
    configs = [c["name"] for c in doc["commands"][0]["configs"]]
    assert len(configs) == 8 and configs[0] == "plain" and configs[-2:] == ["heaptrack", "massif"]
    report = open_report(browser, profilers / "bench.html", "bench-profilers")
    try:
        assert report.eval("() => document.querySelector('#bench h2').textContent") == \
            "Profiler comparison"
        assert "Allocator" not in report.page.locator("#bench").inner_text()
        charts = report.eval(TEXT_BOXES)
        assert len(charts) == len(doc["commands"][0]["configs"][0]["stats"])
        for chart in charts:
            labels = [t for t in chart["texts"] if t["label"]]
            assert [t["text"] for t in labels] == configs, chart["title"]
            assert not any(lab["cut"] for lab in chart["labels"]), chart["labels"]
            for i, a in enumerate(chart["texts"]):
                assert a["right"] - a["left"] > 1 and a["bottom"] - a["top"] > 1, a
                for b in chart["texts"][i + 1:]:
                    assert not overlap(a, b), (chart["title"], a["text"], b["text"])
        shoot(report, shots, "bench")
        assert report.errors == [] and report.requests == []
    finally:
        report.close()
