"""Documents into one self-contained HTML page (`heapscope html`, `heapscope bench --html`).

    page.py       assembles the page: data as JSON, scripts and styles inlined
    assets.py     the vendored libraries (assets/, scripts/vendor_assets.py) and our js/
    overview.py   1. program, processes, totals, warnings     js/overview.js
    sizes.py      2. sizes x regions, groups, hot sizes       js/sizes.js
    stacks.py     3. flame graphs and call graphs             js/stacks.js
    tracking.py   4. lifetimes, temporaries, peak, leaks      js/tracking.js
    access.py     5. memory allocated and not used            js/access.js
    timeline.py   6. heap/RSS/PSS over time, MPI ranks        js/timeline.js
    diff.py       7. two recordings compared                  js/diff.js
    bench.py      8. allocator or profiler comparison (bench)  js/bench.js
    scaling.py    memory against the rank count (scaling)  js/scaling.js
Each section module has ID, TITLE, SCRIPT and data(docs): the part of the documents its
script lays out (no figure is computed in JavaScript).
"""
from heapscope.render.html import (access, bench, diff, overview, page, scaling, sizes, stacks,
                                   timeline, tracking)

PROFILE_SECTIONS = [overview, sizes, stacks, tracking, access, timeline, diff]


def _sections(modules):
    return [(m.ID, m.TITLE, m.SCRIPT, m.data) for m in modules]


def render_profile_page(docs: dict, title: str) -> str:
    """The report of one recording (or two compared): docs from analysis.page_documents."""
    return page.render(docs, _sections(PROFILE_SECTIONS), title)


def render_bench_page(doc: dict, title: str = "heapscope bench") -> str:
    """The `heapscope bench` document (bench.results.document) as a page, its section
    titled by what was compared (allocators, or profilers)."""
    section = (bench.ID, bench.title(doc), bench.SCRIPT, bench.data)
    return page.render(dict(bench=doc), [section], title)


def render_scaling_page(doc: dict) -> str:
    """The `heapscope scaling` document (analysis.scaling.build) as a page."""
    section = (scaling.ID, scaling.TITLE, scaling.SCRIPT, scaling.data)
    return page.render(dict(scaling=doc), [section], f"heapscope scaling: {doc['program']}")
