"""The HTML report of a 4-rank MPI job recorded with --track (tests/programs/mpi_peak_stacks.c
under Open MPI) in a real browser: the job file's stack types at the ranks' heap peaks
are the table of `heapscope report --format json`, row by row."""
import json
import shutil

import pytest

from conftest import MPI_FAMILIES
from helpers.browser import browser, open_report  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def job(heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("html-peaks")
    openmpi = MPI_FAMILIES["openmpi"]
    program = openmpi.compile("mpi_peak_stacks.c", root / "mpi_peak_stacks")
    heapscope("record", "--track", "--sizes", "1000-100000000", "--per-rank", "all", "-o",
              root / "out", "--", *openmpi.mpirun(4), program)
    ranks = root / "ranks"            # the rank files and the job file (not the launcher's)
    ranks.mkdir()
    for f in [*(root / "out").glob("heapscope.*.r*.hsp"), *(root / "out").glob("*.hsj")]:
        shutil.copy(f, ranks)
    heapscope("html", ranks, "-o", root / "job.html")
    return root


def test_the_peak_stack_types_table_is_the_job_documents(browser, job, heapscope):  # noqa: F811
    doc = json.loads(heapscope("report", job / "ranks", "--format", "json").stdout)
    types = doc["job_file"]["peak_stacks"]["types"]
    report = open_report(browser, job / "job.html", "job")
    rows = [r.split("\t") for r in
            report.page.locator("#timeline .hs-peak-stacks tbody tr").all_inner_texts()]
    assert len(rows) == len(types) == 10
    for cells, t in zip(rows, types):
        assert int(cells[0].replace(",", "")) == t["bytes"] and int(cells[1]) == t["ranks"]
        assert cells[2] == f"{t['bytes_max']:,} (rank {t['max_rank']})"
        assert cells[5] == t["region"]
        assert cells[6].startswith(t["frames"][0]["function"] + " ← ")
    assert rows[0][6].startswith("hold_mesh ← main")
    assert report.errors == [] and not any("--track" in a for a in
                                           report.page.locator("#timeline .hs-absent").all_inner_texts())
    report.close()
