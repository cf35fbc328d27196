"""The job report's timeline figures from known samples: per-rank peaks, the ranks placed
on one time axis by their start times, per-bin maxima, the sum over ranks, regions, and
the PNG/SVG plot (profiles built in memory from the model: heapscope.profile.model)."""
import xml.etree.ElementTree as ET

from heapscope.analysis import job
from heapscope.profile.model import Profile, Sample, Timeline
from heapscope.render import job_text as render_job
from heapscope.render.plots import write_job_plot as write_plot

S = 1_700_000_000_000_000_000
SEC = 1_000_000_000


def _rank(rank, start, samples, calipers=(0, 0, 0)):
    tl = Timeline(interval_ns=SEC, samples=[Sample(t, kind, region, "", heap, mpi, rss, pss)
                                            for t, kind, region, heap, mpi, rss, pss in samples])
    tl.mpi_rss_delta_bytes, tl.mpi_pss_delta_bytes, tl.calipers_taken = calipers
    return Profile(path=f"r{rank}.hsp", pid=100 + rank, rank=rank, host=f"n{rank}", exe="/app",
                   job_id="9", start_real_ns=start, snapshot_reason="exit",
                   size_counts={("(none)", 8): 1}, timeline=tl)


def _job():
    r0 = _rank(0, S, [(0, "periodic", "(none)", 100, 0, 1000, 500),
                      (SEC, "mpi-after", "solve", 300, 100, 2000, 600),
                      (2 * SEC, "final", "solve/[MPI]", 50, 50, -1, -1)], calipers=(4096, 2048, 3))
    r1 = _rank(1, S + SEC, [(0, "periodic", "(none)", 200, 20, -1, -1),
                            (SEC, "final", "(none)", 400, 200, -1, -1)])
    return job.build([job.summarize(r0), job.summarize(r1)], timeline_points=4)


def test_peaks_and_stats_from_samples():
    doc = _job()
    rows = {r["rank"]: r for r in doc["per_rank"]}
    assert (rows[0]["heap_peak"], rows[0]["heap_app_peak"], rows[0]["heap_mpi_peak"]) == (300, 200, 100)
    assert (rows[1]["heap_peak"], rows[1]["heap_app_peak"], rows[1]["heap_mpi_peak"]) == (400, 200, 200)
    assert (rows[0]["rss_peak"], rows[0]["pss_peak"], rows[1]["rss_peak"]) == (2000, 600, None)
    assert (rows[0]["mpi_rss"], rows[0]["mpi_pss"], rows[1]["mpi_rss"]) == (4096, 2048, None)
    s = doc["stats"]["heap_peak"]
    assert (s["min"], s["min_rank"], s["min_host"], s["max"], s["max_rank"], s["max_host"], s["mean"]) == \
        (300, 0, "n0", 400, 1, "n1", 350)
    assert doc["stats"]["rss_peak"]["ranks"] == 1
    s = doc["stats"]["heap_app_peak"]   # a tie: the lowest rank is named
    assert (s["min_rank"], s["max_rank"]) == (0, 0)
    regions = {r["region"]: r for r in doc["regions"]}
    assert regions["solve"]["heap_peak"]["max"] == 300      # "solve/[MPI]" is MPI memory of "solve"
    assert regions["(none)"]["heap_peak"]["max"] == 400 and regions["(none)"]["heap_peak"]["min"] == 100


def test_timelines_on_one_axis():
    tl = _job()["timeline"]
    assert tl["start_real_ns"] == S and tl["end_s"] == 2.0
    assert tl["seconds"] == [0.0, 0.5, 1.0, 1.5]
    r0, r1 = tl["per_rank"]
    assert (r0["app"], r0["mpi"], r0["rss"], r0["pss"]) == \
        ([100, 100, 200, 200], [0, 0, 100, 100], [1000, 1000, 2000, 0], [500, 500, 600, 0])
    assert (r1["app"], r1["mpi"], r1["rss"]) == ([0, 0, 180, 200], [0, 0, 20, 200], None)
    assert (r1["first_s"], r1["last_s"], r1["samples"]) == (1.0, 2.0, 2)
    assert tl["total"] == dict(app=[100, 100, 380, 400], mpi=[0, 0, 120, 300],
                               rss=[1000, 1000, 2000, 0], pss=[500, 500, 600, 0])


def test_text_csv_and_plots(tmp_path):
    doc = _job()
    text = render_job.render(doc)
    assert "sum application heap" in text and "Per rank (application and MPI heap" in text
    lines = text.splitlines()
    sums = [l for l in lines if l.strip().startswith("sum application heap")]
    assert sums[0].split()[-1] == "400"
    csv = render_job.render_csv(doc).splitlines()
    assert "timeline,all,,,app,1.000000,380" in csv
    assert "max,1,n1,,heap_peak,,400" in csv
    png, svg = tmp_path / "job.png", tmp_path / "job.svg"
    write_plot(doc, str(png))
    write_plot(doc, str(svg))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ET.parse(svg).getroot().tag.endswith("svg")
