"""The HTML page's first view, in a real browser, on programs with known allocations:

- tests/programs/html_first_view.c (96 B x700, the busiest; 4000 B x400; 24 B x300;
  48 B x50; make_cells allocates three of those sizes along one call path): the size
  table opens sorted by allocations, the stacks section on the busiest size with its
  call graph drawn, and the merged flame graph has one box per call path whatever the
  sizes through it, coloured by the size most of its allocations have;
- tests/programs/quiet_libs.c through three libraries without debug information,
  recorded with --track: the page says its notes once, in one block, one line for the
  three "no debug info" notes with the three in a fold, and nowhere else.
"""
import pytest

from helpers.browser import browser, open_report, shoot, shots  # noqa: F401 (fixtures)
from helpers.known_programs import quiet_libraries

SIZES = {96: 700, 4000: 400, 24: 300, 48: 50}

FLAME_BOXES = """() => [...document.querySelectorAll('#hs-flame g.frame')].map(g => {
  const d = d3.select(g).datum();
  return {name: g.getAttribute('name'), count: d.data.count, sizes: d.data.sizes,
          fill: g.querySelector('rect').getAttribute('fill')};
})"""


@pytest.fixture(scope="module")
def first_view(build, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("html-first-view")
    heapscope("record", "-o", root / "rec", "--sizes", "24,48,96,4000", "--",
              build("html_first_view.c"))
    heapscope("html", root / "rec", "-o", root / "page.html")
    return root


@pytest.fixture(scope="module")
def page(browser, first_view):  # noqa: F811
    report = open_report(browser, first_view / "page.html", "first-view")
    yield report
    report.close()


def test_the_size_table_opens_sorted_by_allocations(page, shots):  # noqa: F811
    rows = page.page.locator("#hs-size-table tbody tr").all_inner_texts()
    top = [(int(c[0].replace(",", "")), int(c[-2].replace(",", "")))
           for c in (r.split("\t") for r in rows[:4])]
    assert top == list(SIZES.items())            # 96, 4000, 24, 48: by count, not by size
    counts = [int(r.split("\t")[-2].replace(",", "")) for r in rows]
    assert counts == sorted(counts, reverse=True)
    header = page.page.locator("#hs-size-table th[aria-sort='descending']").inner_text()
    assert header.startswith("total")
    shoot(page, shots, "sizes")


def test_the_stacks_open_on_the_busiest_size_with_its_call_graph(page, shots):  # noqa: F811
    chosen = page.page.locator("#stacks select").first.evaluate("s => s.options[s.selectedIndex].text")
    assert chosen.startswith("96 B in (none): 700 allocations, 2 stack trace types")
    svg = page.page.locator("#hs-callgraph svg")
    assert svg.count() == 1 and "make_cells" in svg.text_content()
    ranking = page.page.locator("#hs-callgraph .hs-ranking tbody tr").all_inner_texts()
    # alloc_block (straight into malloc, a name that says so) is a wrapper, seen through
    assert [(r.split("\t")[6].split(" @ ")[0], int(r.split("\t")[2])) for r in ranking] == \
        [("make_cells", 500), ("make_vectors", 200)]
    boxes = {}
    for b in page.eval(FLAME_BOXES):
        boxes.setdefault(b["name"], []).append(b["count"])
    assert (boxes["make_cells"], boxes["make_vectors"], boxes["alloc_block"]) == \
        ([500], [200], [500, 200])     # the leaf under each of its two callers
    options = page.page.locator("#stacks select").first.locator("option").all_inner_texts()
    assert [o.split(" B in")[0] for o in options[1:]] == ["96", "4000", "24", "48"]   # by count
    shoot(page, shots, "stacks")
    assert page.errors == [] and page.requests == []


def test_the_merged_flame_graph_has_one_box_per_path_coloured_by_size(page):
    select = page.page.locator("#stacks select").first
    select.select_option("all")
    page.page.wait_for_timeout(600)
    boxes = page.eval(FLAME_BOXES)
    cells = [b for b in boxes if b["name"] == "make_cells"]
    assert len(cells) == 1                       # one box, not one per size
    assert cells[0]["count"] == 850 and cells[0]["sizes"] == {"96": 500, "24": 300, "48": 50}
    vectors = [b for b in boxes if b["name"] == "make_vectors"]
    assert len(vectors) == 1 and vectors[0]["sizes"] == {"96": 200, "4000": 400}
    root = next(b for b in boxes if b["name"] == "all recorded stacks")
    assert root["count"] == sum(SIZES.values())
    legend = page.eval("() => [...document.querySelectorAll('#hs-size-legend .hs-swatch-item')]"
                       ".map(e => [e.dataset.size, e.querySelector('.hs-swatch').style.background])")
    colour = {int(s): c for s, c in legend if s}
    assert list(colour) == list(SIZES)           # the sizes by allocations
    rgb = page.eval("c => { const e = document.createElement('i'); e.style.color = c; "
                    "document.body.append(e); const v = getComputedStyle(e).color; e.remove(); "
                    "return v; }", cells[0]["fill"])
    assert rgb == colour[96] and vectors[0]["fill"] != cells[0]["fill"]   # 4000 B leads there
    assert page.errors == []


@pytest.fixture(scope="module")
def quiet(native, heapscope, tmp_path_factory):
    """quiet_libs through three libraries built without -g, recorded with --track."""
    tmp = tmp_path_factory.mktemp("html-notes")
    program = quiet_libraries(tmp)
    heapscope("record", "-o", tmp / "rec", "--track", "--sizes", "16", "--", program)
    heapscope("html", tmp / "rec", "-o", tmp / "page.html")
    return tmp


def test_the_page_says_each_note_once_in_one_block(browser, quiet, shots):  # noqa: F811
    report = open_report(browser, quiet / "page.html", "notes")
    try:
        blocks = report.page.locator(".hs-notes")
        assert blocks.count() == 1
        kinds = report.page.locator("#hs-notes > ul > li")
        assert kinds.count() == 1
        summary = kinds.first.locator("summary").inner_text()
        assert summary.startswith("no debug info for 3 libraries (libquiet1.so, libquiet2.so, "
                                  "libquiet3.so)")
        folded = kinds.first.locator("details li").all_text_contents()
        assert sorted(folded) == [f"no debug info for {quiet / f'libquiet{n}.so'}; install its "
                                  f"-dbgsym package or rebuild with -g" for n in (1, 2, 3)]
        assert not kinds.first.locator("details").evaluate("d => d.open")
        # nowhere else: not among the warnings, not under the flame graph or the timeline
        text = report.eval("() => { const c = document.querySelector('main').cloneNode(true); "
                           "c.querySelector('#hs-notes').remove(); return c.textContent; }")
        assert "no debug info" not in text and "libquiet" not in text
        shoot(report, shots, "overview")
        assert report.errors == [] and report.requests == []
    finally:
        report.close()
