"""Figures of the job report that mean their labels, on a synthetic job file (the format
table's writer) and a kept rank file beside it:
  - heap peaks a recorder kept exactly (JOB_RANKS present bit 32) are not marked
    "sampled ... a lower bound"; one row without the bit makes them so;
  - an MPI calipers' figure never measured (-1 in the row) is null, not 0;
  - per host, the RSS and PSS sums and largest are the per-rank figures shown (the
    job file's JOB_HOSTS were summed at MPI_Finalize, before rank 0's file's later
    samples: its PSS peak differed between the two tables);
  - a rank that exited after MPI calls without MPI_Finalize, its launcher gone, is shown
    so, not as a plain exit."""
import json

from heapscope.analysis import job as job_analysis
from heapscope.analysis.job_loading import load_summaries, read_job
from heapscope.profile import format as fmt
from heapscope.profile import read_profile
from heapscope.render.job_text import render

from helpers.profile_builder import ProfileBuilder, chunk, header, payload

EXACT = 32


def _row(rank, present, **figures):
    row = dict(rank=rank, host=0, pid=500 + rank, reason=fmt.REASON_API, present=present,
               kept=int(rank == 0), alloc_app_blocks=10, alloc_mpi_blocks=5, alloc_app_bytes=1000,
               alloc_mpi_bytes=64, heap_peak=9000 + rank, heap_app_peak=8000, heap_mpi_peak=700,
               rss_peak=(20 + rank) << 20, pss_peak=(10 + rank) << 20, mpi_rss=4096, mpi_pss=2048)
    row.update(figures)
    return row


def _job(directory, rows, host_pss_max):
    listed = [r for r in rows]
    hosts = [dict(name="n1", ranks=len(listed), reserved=0, rss_sum=sum(r["rss_peak"] for r in rows),
                  rss_max=max(r["rss_peak"] for r in rows), pss_sum=host_pss_max * len(rows),
                  pss_max=host_pss_max)]
    parts = [("JOB", payload("JOB", ranks=len(rows), hosts=1, summarized=len(rows), reserved=0,
                             summary_ns=1, reduce_ns=1, job_id="31", per_rank="", recorder_version="x",
                             exe="/apps/sim")),
             ("JOB_REGIONS", payload("JOB_REGIONS", regions=[dict(path="(none)")])),
             ("JOB_RANKS", payload("JOB_RANKS", ranks=rows)),
             ("JOB_HOSTS", payload("JOB_HOSTS", hosts=hosts))]
    (directory / "heapscope.31.job.hsj").write_bytes(header() + b"".join(chunk(n, p) for n, p in parts))


def _kept_rank0(directory, pss):
    """Rank 0's own file: its timeline's PSS peak later than the job file's summary."""
    b = ProfileBuilder(pid=500, rank=0, job_id="31", exe="/apps/sim", host="n1")
    samples = [dict(mono_ns=10, kind=fmt.SAMPLE_PERIODIC, region=0, label=fmt.NO_LABEL,
                    heap_bytes=-1, heap_component_bytes=-1, rss_bytes=20 << 20, pss_bytes=pss)]
    b.add("TIMELINE", interval_ns=10, caliper_ns=-1, heap_measure=fmt.HEAP_MEASURE_NONE,
          calipers_taken=0, calipers_skipped=0, mpi_rss_delta=0, mpi_pss_delta=0, samples_lost=0,
          labels=(), samples=samples)
    b.snapshot(regions=[(1, 0, "[MPI]")], sizes=[(0, 24, 3), (1, 8, 2)])
    b.write(directory / "heapscope.31.r0.n1.500.hsp")


def _report(directory):
    jf = read_job([directory])
    return job_analysis.build(load_summaries([directory], job=jf), job=jf)


def _rows():
    return [_row(0, 31 | EXACT), _row(1, 31 | EXACT), _row(2, 31 | EXACT, mpi_rss=-1, mpi_pss=-1),
            _row(3, 31 | EXACT)]


def _written(tmp_path, rows):
    _job(tmp_path, rows, host_pss_max=11 << 20)       # as summed at MPI_Finalize
    _kept_rank0(tmp_path, pss=40 << 20)               # rank 0's later samples: higher
    return _report(tmp_path)


def test_exact_heap_peaks_are_not_marked_sampled(tmp_path):
    rows = _rows()
    doc = _written(tmp_path, rows)
    sampled = {m["key"]: m["sampled"] for m in doc["metrics"]}
    assert (sampled["heap_peak"], sampled["heap_mpi_peak"], sampled["pss_peak"]) == (False, False, True)
    text = render(doc)
    assert "heap peak (sampled)" not in text and "PSS peak (sampled)" in text
    # one row without the exact bit: its heap peaks are the largest samples
    rows[3]["present"] = 31
    sampled = {m["key"]: m["sampled"] for m in _written(tmp_path, rows)["metrics"]}
    assert sampled["heap_peak"] and sampled["heap_app_peak"]


def test_a_calipers_figure_never_measured_is_null_not_zero(tmp_path):
    per_rank = {r["rank"]: r for r in _written(tmp_path, _rows())["per_rank"]}
    assert (per_rank[2]["mpi_rss"], per_rank[2]["mpi_pss"]) == (None, None)
    assert (per_rank[1]["mpi_rss"], per_rank[1]["mpi_pss"]) == (4096, 2048)


def test_host_figures_are_the_per_rank_figures_added_up(tmp_path):
    doc = _written(tmp_path, _rows())
    per_rank = {r["rank"]: r for r in doc["per_rank"]}
    assert per_rank[0]["pss_peak"] == 40 << 20
    [host] = doc["job_file"]["hosts"]
    assert host == dict(host="n1", ranks=4, rss_sum=sum(r["rss_peak"] for r in per_rank.values()),
                        rss_max=23 << 20, pss_sum=(40 + 11 + 12 + 13) << 20, pss_max=40 << 20,
                        recorder_sum=None, recorder_max=None)   # (no JOB_RECORDER: unknown)
    json.dumps(doc, default=str)


def test_a_rank_torn_down_before_mpi_finalize_is_no_plain_exit(tmp_path):
    def rank(r, flags, status=None):
        b = ProfileBuilder(pid=100 + r, rank=r, job_id="8", exe="/apps/sim")
        end = payload("PROCESS_END", how=fmt.END_EXIT_NOW if status is not None else fmt.END_EXIT,
                      status=status or 0, flags=flags | (fmt.END_STATUS_KNOWN if status is not None else 0))
        b.snapshot(sizes=[(0, 1000, r + 1)], extra=[(fmt.PROCESS_END, end)])
        return job_analysis.summarize(read_profile(b.write(tmp_path / f"heapscope.8.r{r}.vm.{100 + r}.hsp")))
    torn = fmt.END_MPI_UNFINALIZED | fmt.END_ORPHANED
    ranks = [rank(0, torn, -61), rank(1, torn, -61), rank(2, 0), rank(3, fmt.END_MPI_UNFINALIZED, 3)]
    doc = job_analysis.build(ranks)
    assert [(r["rank"], r["ended"], r["text"]) for r in doc["per_rank"]] == [
        (0, "no-finalize", "_exit(-61) before MPI_Finalize; its launcher had ended"),
        (1, "no-finalize", "_exit(-61) before MPI_Finalize; its launcher had ended"),
        (2, "exit", "exit"),
        (3, "no-finalize", "_exit(3) before MPI_Finalize")]
    assert doc["endings"]["unfinalized"] == [
        dict(rank=0, status=-61, orphaned=True, text="_exit(-61) before MPI_Finalize; its launcher had ended"),
        dict(rank=1, status=-61, orphaned=True, text="_exit(-61) before MPI_Finalize; its launcher had ended"),
        dict(rank=3, status=3, orphaned=False, text="_exit(3) before MPI_Finalize")]
    text = render(doc)
    assert ("ended     ranks 0, 1, 3 exited before MPI_Finalize (_exit(-61), _exit(3)), 2 of them "
            "after their launcher had ended: their exit snapshot") in text, text
    assert "exit-early" in text
