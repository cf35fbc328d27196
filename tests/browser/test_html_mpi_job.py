"""The HTML report of a 4-rank MPI job in a real browser (tests/programs/mpi_job_ranks.c
under Open MPI: rank r keeps r + 1 blocks of 1,000,000 bytes and two of 7000 bytes in
region pcontrol-1): the rank table, the statistics over the ranks and the timelines per
rank and summed equal `heapscope report --format json` (the job document)."""
import json

import pytest

from conftest import MPI_FAMILIES
from heapscope.analysis.job_peak_stacks import NO_TRACK
from helpers.browser import browser, open_report, shoot, shots  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def job(heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("html-job")
    openmpi = MPI_FAMILIES["openmpi"]
    program = openmpi.compile("mpi_job_ranks.c", root / "mpi_job_ranks")
    heapscope("record", "--mpi", "-o", root / "out", "--", *openmpi.mpirun(4), program)
    heapscope("html", root / "out", "-o", root / "job.html")
    return root


@pytest.fixture(scope="module")
def page(browser, job):  # noqa: F811
    report = open_report(browser, job / "job.html", "job")
    yield report
    report.close()


@pytest.fixture(scope="module")
def doc(job, heapscope):
    return json.loads(heapscope("report", job / "out", "--format", "json").stdout)


def number(text):
    return int(text.replace(",", ""))


def test_rank_table_says_which_rank_ran_where_with_its_figures(page, doc, shots):  # noqa: F811
    rows = page.page.locator("#timeline .hs-ranks tbody tr").all_inner_texts()
    cells = [r.split("\t") for r in rows]
    assert [(number(c[0]), c[1], number(c[2])) for c in cells] == \
        [(r["rank"], r["host"], r["pid"]) for r in doc["per_rank"]] and len(cells) == 4
    titles = page.page.locator("#timeline .hs-ranks thead th").all_inner_texts()
    app = titles.index("allocated blocks, application")
    assert [number(c[app]) for c in cells] == [r["alloc_app_blocks"] for r in doc["per_rank"]]
    shoot(page, shots, "timeline")
    shoot(page, shots, "overview")
    assert page.errors == [] and page.requests == []


def test_without_track_the_page_says_how_to_see_who_held_the_peaks(page, doc):
    assert doc["job_file"]["peak_stacks"] == {"absent": NO_TRACK}
    assert NO_TRACK in page.page.locator("#timeline .hs-absent").all_inner_texts()


def test_statistics_name_the_min_and_max_rank(page, doc):
    rows = page.page.locator("#timeline .hs-stats tbody tr").all_inner_texts()
    by_title = {c[0]: c for c in (r.split("\t") for r in rows)}
    titles = {m["key"]: m["title"] for m in doc["metrics"]}
    s = doc["stats"]["alloc_app_blocks"]
    row = by_title[titles["alloc_app_blocks"]]
    assert (number(row[1]), row[2], number(row[3]), row[4]) == \
        (s["min"], f"rank {s['min_rank']} ({s['min_host']})", s["max"], f"rank {s['max_rank']} ({s['max_host']})")


def test_each_rank_and_the_sum_are_drawn_on_the_jobs_grid(page, doc):
    charts = page.page.locator("#timeline .hs-chart")
    titles = [charts.nth(i).get_attribute("data-title") for i in range(charts.count())]
    assert titles[:2] == ["sum over ranks", "application heap per rank"]
    # the data uPlot holds is the job document's grid, per rank and summed
    drawn = page.eval("""() => [...document.querySelectorAll('#timeline .hs-chart')].slice(0, 2)
        .map(h => ({labels: h.uplot.series.map(s => s.label), data: h.uplot.data}))""")
    tl = doc["timeline"]
    total, per_rank = drawn
    assert total["data"][0] == tl["seconds"]
    assert total["data"][total["labels"].index("application heap")] == tl["total"]["app"]
    assert per_rank["labels"][1:5] == [f"rank {r['rank']}" for r in tl["per_rank"]]
    for i, r in enumerate(tl["per_rank"]):
        assert per_rank["data"][1 + i] == r["app"]
    # the envelope: max and min over the ranks, bin by bin; rank r kept r + 1 MB
    top = per_rank["data"][per_rank["labels"].index("max over ranks")]
    assert top == [max(r["app"][j] for r in tl["per_rank"]) for j in range(tl["points"])]
    assert max(top) >= 4 * 1000000 + 14000


def test_sizes_merge_the_ranks(page):
    more = page.page.locator("#hs-size-table button", has_text="show all")
    if more.count():
        more.click()
    cells = page.eval("""() => [...document.querySelectorAll(
        "#hs-size-table tr[data-size='1000000'] span.hs-heat")].map(s => [s.dataset.region, Number(s.dataset.count)])""")
    assert dict(cells)["(none)"] == 1 + 2 + 3 + 4


def test_a_job_known_only_from_its_job_file_has_a_page(heapscope, browser, tmp_path):  # noqa: F811
    """record --per-rank none with the launcher not recorded leaves the job file alone: the
    page is the job's (rank table, statistics), with no size table, and no error."""
    openmpi = MPI_FAMILIES["openmpi"]
    program = openmpi.compile("mpi_job_ranks.c", tmp_path / "mpi_job_ranks")
    heapscope("record", "--mpi", "--per-rank", "none", "-o", tmp_path / "out", "--",
              *openmpi.mpirun(4), program)
    only = tmp_path / "only"
    only.mkdir()
    for f in (tmp_path / "out").glob("*.job.hsj"):
        f.rename(only / f.name)
    doc = json.loads(heapscope("report", only, "--format", "json").stdout)
    heapscope("html", only, "-o", tmp_path / "only.html")
    report = open_report(browser, tmp_path / "only.html", "job-file-only")
    try:
        rows = report.page.locator("#timeline .hs-ranks tbody tr").all_inner_texts()
        cells = [r.split("\t") for r in rows]
        assert [(number(c[0]), number(c[2])) for c in cells] == \
            [(r["rank"], r["pid"]) for r in doc["per_rank"]] and len(cells) == 4
        assert report.page.title() == "heapscope: mpi_job_ranks"
        assert report.errors == [] and report.requests == []
    finally:
        report.close()
