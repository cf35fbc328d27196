"""The HTML report's stack trace types in a real browser: the flame graph of a program
with five known call paths (tests/programs/stk_paths.cpp: 40-byte blocks along paths
a 200 + 100, b 150, c 75, d 50 in region "local", b 7 outside any region), its zoom,
search, hover and icicle toggle, the link from the size table, and the call graph with
the fix targets `heapscope callgraph` ranks."""
import json

import pytest

from helpers.browser import browser, open_report, shoot, shots  # noqa: F401 (fixtures)

LOCAL = {"phase_local": 575, "path_a": 300, "alloc_leaf": 300, "path_b": 150,
         "fem::Mesh<double>::refine(int)": 75, "path_d": 50}

FLAME_NODES = """() => {
  const out = {};
  for (const g of document.querySelectorAll('#hs-flame g.frame')) {
    const d = d3.select(g).datum(), name = g.getAttribute('name');
    const acc = out[name] || (out[name] = {value: 0, count: 0, bytes: 0});
    acc.value += d.value; acc.count += d.data.count; acc.bytes += d.data.bytes;
  }
  return out;
}"""


@pytest.fixture(scope="module")
def stk(build, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("html-stacks")
    heapscope("record", "-o", root / "rec", "--sizes", "40", "--", build("stk_paths.cpp"))
    heapscope("html", root / "rec", "-o", root / "stk.html")
    return root


@pytest.fixture(scope="module")
def page(browser, stk):  # noqa: F811
    report = open_report(browser, stk / "stk.html", "stacks")
    yield report
    report.close()


def choose_local_group(page):
    select = page.page.locator("#stacks select").first
    label = next(o for o in select.locator("option").all_inner_texts() if o.startswith("40 B in local"))
    select.select_option(label=label)
    page.page.wait_for_timeout(500)


def test_flame_graph_of_every_group_merges_both_regions(page, shots):  # noqa: F811
    page.page.locator("#stacks select").first.select_option("all")
    page.page.wait_for_timeout(500)
    nodes = page.eval(FLAME_NODES)
    assert nodes["all recorded stacks"]["count"] == 575 + 7
    assert nodes["path_b"]["count"] == 150 + 7          # in "local" and outside any region
    assert not any(name.startswith("40 B in") for name in nodes)
    shoot(page, shots, "stacks")
    assert page.errors == [] and page.requests == []


def test_flame_graph_of_one_size_and_region_shows_the_known_paths(page, stk, heapscope):
    choose_local_group(page)
    nodes = page.eval(FLAME_NODES)
    for name, count in LOCAL.items():
        assert nodes[name]["value"] == count and nodes[name]["count"] == count, name
        assert nodes[name]["bytes"] == 40 * count, name
    # the same figures as `heapscope stacks`: the root is the group's count
    doc = json.loads(heapscope("stacks", stk / "rec", "--size", "40", "--format", "json").stdout)
    group = next(g for g in doc["groups"] if g["region"] == "local")
    root = next(v for k, v in nodes.items() if k.startswith("40 B in local"))
    assert root["count"] == group["count"] == 575
    rows = page.page.locator("#stacks .hs-stack-types tbody tr").all_inner_texts()
    assert [int(r.split("\t")[1].replace(",", "")) for r in rows] == \
        [t["count"] for t in group["stack_types"]]


def test_bytes_width_search_hover_and_icicle(page):
    choose_local_group(page)
    page.page.locator("#stacks select").nth(1).select_option("bytes")
    page.page.wait_for_timeout(400)
    assert page.eval(FLAME_NODES)["path_a"]["value"] == 300 * 40
    page.page.fill("#hs-flame-search", "path_a")
    page.page.wait_for_timeout(400)
    assert "12000 of 23000" in page.page.locator(".hs-flame-details").inner_text()
    page.page.fill("#hs-flame-search", "")
    page.page.locator("#hs-flame g.frame[name='path_b'] rect").hover()
    tip = page.page.locator(".d3-flame-graph-tip").last
    tip.wait_for(state="visible")
    assert "150 allocations" in tip.inner_text() and "6,000 bytes" in tip.inner_text()
    depth_y = "() => { const g = [...document.querySelectorAll('#hs-flame g.frame')]" \
              ".find(g => d3.select(g).datum().depth === 0); return g.getAttribute('transform'); }"
    flame = page.eval(depth_y)
    page.page.click("#hs-flame-invert")
    page.page.wait_for_timeout(700)
    assert page.eval(depth_y) != flame and page.eval(depth_y).endswith(",0)")
    page.page.click("#hs-flame-invert")


def test_zoom_on_a_frame_fills_the_width_with_it(page):
    choose_local_group(page)
    page.page.locator("#hs-flame g.frame[name='path_b'] rect").click()
    page.page.wait_for_timeout(900)
    width = "n => d3.select(document.querySelector(`#hs-flame g.frame[name='${n}']`)).datum()"
    x = page.eval(f"() => {{ const d = ({width})('path_b'); return [d.x0, d.x1]; }}")
    assert x == [0, 1]   # zoomed: path_b spans the whole partition
    page.page.click("text=reset zoom")


def test_a_size_in_the_table_opens_its_stacks(page, shots):  # noqa: F811
    page.page.locator("#sizes a.hs-size-link[data-size='40']").first.click()
    page.page.wait_for_timeout(500)
    chosen = page.page.locator("#stacks select").first.evaluate("s => s.options[s.selectedIndex].text")
    assert chosen.startswith("40 B in")
    shoot(page, shots, "sizes")


def test_call_graph_highlights_the_fix_targets_callgraph_ranks(page, stk, heapscope, tmp_path, shots):  # noqa: F811
    choose_local_group(page)
    doc = json.loads(heapscope("callgraph", stk / "rec", "--size", "40", "--region", "local",
                               "--format", "json", "-o", tmp_path / "cg").stdout)
    rows = page.page.locator("#hs-callgraph .hs-ranking tbody tr").all_inner_texts()
    ranked = [(int(c[0]), int(c[1]), int(c[2].replace(",", "")), c[6].split(" @ ")[0])
              for c in (r.split("\t") for r in rows)]
    assert ranked == [(v["rank"], v["types"], v["count"], v["function"])
                      for v in doc["ranking"][:len(ranked)]]
    # alloc_leaf (return malloc(n)) is a wrapper, seen through; phase_local, the trunk's
    # end, calls every allocating loop itself (docs/ranking.md, rule 4); then path_a,
    # whose paths a1 and a2 share alloc_leaf
    assert ranked[:2] == [(1, 5, 575, "phase_local"), (2, 2, 300, "path_a")]
    assert "Wrappers (user code passing each call to one allocation)" in page.page.locator(
        "#hs-callgraph").inner_text()
    svg = page.page.locator("#hs-callgraph svg")
    assert svg.count() == 1 and "#1" in svg.text_content()
    shoot(page, shots, "stacks")
    assert page.errors == [] and page.requests == []
