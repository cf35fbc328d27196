"""`heapscope scaling --html FILE` in a real browser, on runs made here with known laws (a
1/p share on top of a fixed part for the heap; a growth of p for MPI's): each chart with
a chosen law draws the document's measured points and its curve, the figures' table shows
the document's predictions, the section draws with no console error."""
import pytest

from heapscope.analysis import scaling
from heapscope.analysis.scaling_runs import Run
from heapscope.profile.mpi_library import MpiLibrary
from heapscope.render.html import render_scaling_page
from helpers.browser import browser, open_report, shoot, shots  # noqa: F401 (fixtures)

LIB = MpiLibrary("Open MPI v4.1.4, package: Debian OpenMPI", 3, 1)


def _run(p):
    heap = 2_000_000 + 24_000_000 // p
    mpi = 1_000_000 + 65_536 * p
    stats = dict(heap_peak=dict(max=heap + mpi, max_rank=0, mean=heap + mpi),
                 heap_app_peak=dict(max=heap, max_rank=0, mean=heap),
                 heap_mpi_peak=dict(max=mpi, max_rank=1, mean=mpi))
    return Run(path=f"/runs/p{p}", ranks=p, exe="/apps/sim", argv=["sim"], library=LIB,
               stats=stats, sampled=[], warnings=[], peak_absent="recorded without --track")


def test_scaling_page_draws_the_documents_points_and_laws(browser, shots, tmp_path):  # noqa: F811
    doc = scaling.build([_run(p) for p in (2, 4, 8, 16)], [32, 64])
    path = tmp_path / "scaling.html"
    path.write_text(render_scaling_page(doc))
    report = open_report(browser, path, "scaling")
    try:
        assert report.errors == [] and report.requests == []
        charts = report.eval("""() => [...document.querySelectorAll('#scaling .hs-scaling-chart')]
            .map((c) => ({ title: c.dataset.title, points: c.points, curve: c.curve.length,
                           canvas: !!c.querySelector('canvas') }))""")
        expected = [(f"{c['component']} heap peak: {c['laws']['heap_peak_per_rank']['law']}",
                     [[m["ranks"], m["heap_peak_per_rank"]] for m in c["measured"]])
                    for c in doc["components"]]
        assert [(c["title"], c["points"]) for c in charts] == expected
        assert [c["title"].rsplit(": ", 1)[1] for c in charts] == ["1/p + p", "1/p", "p"]
        assert all(c["canvas"] for c in charts)
        assert [c["curve"] for c in charts] == [len(c["laws"]["heap_peak_per_rank"]["curve"])
                                                for c in doc["components"]]
        rows = [r.split("\t") for r in
                report.page.locator("#scaling .hs-scaling-table tbody tr").all_inner_texts()]
        assert [r[0] for r in rows] == ["total heap peak", "application heap peak", "MPI heap peak"]
        mpi = next(r for r in rows if r[0] == "MPI heap peak")
        assert mpi[2].startswith("2.95 MiB")          # 1,000,000 + 65,536 x 32 = 3,097,152 B
        assert report.page.locator("#scaling").inner_text().count("recorded without --track") == 1
        shoot(report, shots, "scaling")
    finally:
        report.close()
