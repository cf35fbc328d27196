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
    # calipers: the running sum's peak over before/after pairs; rank 0's one sample
    # pairs with none (its before sample lost): unknown, not its net total 4096
    assert "mpi_rss" not in rows[0] and "mpi_rss" not in doc["stats"]
    # these profiles carry no exact peaks (HEAP_PEAK): the heap figures are the samples'
    titles = {m["key"]: (m["title"], m["sampled"]) for m in doc["metrics"]}
    assert titles["heap_peak"] == ("heap peak (sampled)", True)
    assert not rows[0]["heap_exact"] and "heap peak*" in render_job.render(doc)
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
                               rss=[1000, 1000, 2000, 0], pss=[500, 500, 600, 0],
                               recorder=None)      # (samples without the recorder's figure)


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


def test_caliper_figures_follow_their_definition():
    """Per measured call d = RSS growth - heap growth; the figure is the running sum's
    peak, from 0: MPI_Init maps 8 MB (1 MB of it heap), a call touches 2 MB more,
    MPI_Finalize unmaps 20 MB that became resident outside measured calls. The net
    sum is -11 MB (what the report printed as "MPI non-heap RSS"); the peak is 9 MB
    (MPI_Finalize's own call left out of it)."""
    from heapscope.analysis.timeline import caliper_figures
    MB = 1 << 20
    pairs = [("MPI_Init", 10 * MB, 18 * MB, 0, MB), ("MPI_Send", 18 * MB, 20 * MB, MB, MB),
             ("MPI_Finalize", 30 * MB, 10 * MB, MB, 0)]
    samples = []
    for i, (fn, rss0, rss1, heap0, heap1) in enumerate(pairs):
        samples += [Sample(10 * i, "mpi-before", "(none)", fn, heap0, 0, rss0, rss0 // 2),
                    Sample(10 * i + 5, "mpi-after", "(none)", fn, heap1, 0, rss1, rss1 // 2)]
    tl = Timeline(samples=samples, calipers_taken=3, mpi_rss_delta_bytes=-11 * MB)
    c = caliper_figures(tl)
    assert (c["rss"], c["paired"], c["mpi_rss_delta_bytes"]) == (9 * MB, 3, -11 * MB)
    assert c["pss"] == (4 * MB - MB) + (MB - 0)          # PSS is half the RSS here
    doc = job.build([job.summarize(Profile(path="r0.hsp", rank=0, job_id="1", exe="/a",
                                            size_counts={("(none)", 8): 1}, timeline=tl))])
    assert doc["per_rank"][0]["mpi_rss"] == 9 * MB
    # a process whose RSS only fell: the figure is 0, never negative
    from dataclasses import replace
    tl.samples = [replace(s, label="MPI_Win_free") for s in samples[-2:]]
    assert caliper_figures(tl)["rss"] == 0
    # MPI_Finalize's own call is left out (the job file summarizes as it begins; what
    # it gains is other ranks ending): alone, it leaves the figure unmeasured
    tl.samples = samples[-2:]
    assert (caliper_figures(tl)["rss"], caliper_figures(tl)["paired"]) == (None, 1)

