"""Timeline documents, as plain data: the one place that turns TIMELINE samples into
figures, for `heapscope timeline` (one process at a time) and for the job report (the
ranks on one time axis).

  load_timelines(paths)     the profiles with timeline samples, and those without
  document(profiles)        the `heapscope timeline` document: per process its samples,
                            the peaks of heap, RSS and PSS (value, when, in which region),
                            the region spans paired from the boundary samples, the MPI
                            calipers' totals. Layout: docs/analysis-formats.md.
  sample_columns(timeline)  a process's samples as int64 numpy columns, by time (what a
                            job's RankSummary keeps of a rank's timeline)
  job_timelines(ranks)      the ranks' columns on one grid, per rank and summed
  rank_envelopes(timeline)  per series the lowest and highest rank in each bin of a job
  sampled_columns(process, max_points)   a process's samples as columns by time, reduced
                            to max_points bins of their largest values when longer

Every series is a Sample attribute; -1 means "not measured" (RSS/PSS unreadable, heap
not sampled) and is left out of peaks, never counted as 0. Documents carry null for
it (the `timeline` document's samples and region spans). RSS and PSS are the
program's: net of the recorder's own memory (its tables, rings, buffers), which is the
series "recorder" beside them (profile.timeline; null in files of older recorders,
whose RSS/PSS include it: `recorder_measured` false).
"""
from operator import attrgetter
from typing import Dict, List, Optional, Sequence, Tuple

from heapscope.errors import HeapscopeError
from heapscope.profile import profile_files
from heapscope.profile.model import Profile, Timeline
from heapscope.profile.timeline import read_timeline

TIMELINE_FORMAT = "heapscope-timeline"
TIMELINE_VERSION = 1
NS = 1e9
# (key in "peaks", Sample attribute)
SERIES = (("heap", "heap_bytes"), ("heap_mpi", "heap_mpi_bytes"), ("rss", "rss_bytes"),
          ("pss", "pss_bytes"), ("recorder", "recorder_bytes"))
# the columns of sample_columns(), in order
COLUMNS = ("mono_ns", "heap_bytes", "heap_mpi_bytes", "rss_bytes", "pss_bytes", "recorder_bytes")
JOB_SERIES = ("app", "mpi", "rss", "pss", "recorder")


# ---- one process: the `heapscope timeline` document ----

def load_timelines(paths) -> Tuple[List[Profile], List[Profile]]:
    """(profiles with timeline samples, by rank, start and pid; the files without any).
    None with samples is an error that says why (the timeline was off, or the process
    was killed before its first flush)."""
    profiles, without = [], []
    for f in profile_files(paths):
        p = read_timeline(f)
        (profiles if p.timeline is not None and p.timeline.samples else without).append(p)
    if not profiles:
        which = without[0].path if len(without) == 1 else f"none of the {len(without)} profiles"
        if all(p.complete for p in without):
            why = "recorded with the timeline off (--timeline-interval 0 or HEAPSCOPE_TIMELINE_MS=0)"
        else:   # no snapshot: killed, maybe before the sampler's first flush
            why = ("killed before its first dump and before the timeline's first flush "
                   "(once a second, HEAPSCOPE_TIMELINE_FLUSH_MS), or recorded with the timeline off")
        raise HeapscopeError(f"{which}: no timeline samples: {why}")
    profiles.sort(key=lambda p: (p.rank, p.start_real_ns, p.pid))
    return profiles, without


def document(profiles: List[Profile]) -> dict:
    return dict(format=TIMELINE_FORMAT, version=TIMELINE_VERSION,
                processes=[process_doc(p) for p in profiles])


def process_doc(p: Profile) -> dict:
    tl: Timeline = p.timeline
    samples = tl.samples
    return dict(
        path=p.path, pid=p.pid, rank=p.rank if p.rank >= 0 else None, host=p.host, exe=p.exe, label=p.label,
        start_real_ns=p.start_real_ns, complete=p.complete, warnings=list(p.warnings),
        interval_ns=tl.interval_ns, heap_measure=tl.heap_measure,
        duration_s=(samples[-1].mono_ns / NS) if samples else 0.0,
        sample_count=len(samples),
        recorder_measured=tl.recorder_measured,
        kinds={k: sum(1 for s in samples if s.kind == k) for k in sorted({s.kind for s in samples})},
        peaks={key: peak(samples, attr) for key, attr in SERIES},
        calipers=caliper_figures(tl),
        heap_peaks=(None if tl.heap_peak is None else
                    dict(heap=tl.heap_peak, heap_mpi=tl.heap_peak_mpi, heap_app=tl.heap_peak_app)),
        regions=region_spans(samples),
        samples=[dict(mono_ns=s.mono_ns, kind=s.kind, region=s.region, label=s.label,
                      heap_bytes=_known(s.heap_bytes), heap_mpi_bytes=_known(s.heap_mpi_bytes),
                      rss_bytes=_known(s.rss_bytes), pss_bytes=_known(s.pss_bytes),
                      recorder_bytes=_known(s.recorder_bytes))
                 for s in samples])


def _known(v: int) -> Optional[int]:
    """A sample's value as documents carry it: None (not measured) for the format's -1."""
    return v if v >= 0 else None


FINALIZE_CALL = "MPI_Finalize"


def caliper_figures(tl: Timeline) -> dict:
    """The MPI calipers' figures (docs/report-formats.md, "MPI calipers"): each measured
    call's non-heap growth, d = (RSS after - RSS before) - (heap after - heap before)
    (the same with PSS), from its mpi-before/mpi-after samples; `rss`/`pss`: the
    highest the running sum of d reached over the run, counting from 0 before the
    first call (the library's non-heap memory at its largest; never below 0: before
    MPI_Init it held none); `rss_net`/`pss_net`: the sum at the end (the recorder's
    totals; negative when MPI_Finalize releases memory that became resident outside
    measured calls). A pair: an mpi-after and the latest unpaired mpi-before of the
    same function (concurrent measured calls of several threads may pair across
    threads); a pair with a value not measured (-1) is left out of `rss`/`pss`, and so is
    MPI_Finalize's own (the job file summarizes each rank as MPI_Finalize begins, so its
    rows and a kept rank file give the same figure; and what MPI_Finalize "gains" is
    mostly the other ranks ending: a page shared by fewer processes is more of each
    one's PSS)."""
    out = dict(taken=tl.calipers_taken, skipped=tl.calipers_skipped,
               mpi_rss_delta_bytes=tl.mpi_rss_delta_bytes,
               mpi_pss_delta_bytes=tl.mpi_pss_delta_bytes, rss=None, pss=None, paired=0)
    open_: Dict[str, list] = {}
    sums = {"rss": [0, 0, False], "pss": [0, 0, False]}     # running sum, its peak, measured
    for s in sorted(tl.samples, key=lambda s: s.mono_ns):
        if s.kind == "mpi-before":
            open_.setdefault(s.label, []).append(s)
        elif s.kind == "mpi-after" and open_.get(s.label):
            b = open_[s.label].pop()
            out["paired"] += 1
            if s.label == FINALIZE_CALL:
                continue
            if s.heap_bytes < 0 or b.heap_bytes < 0:
                heap = 0        # heap in use not measured: nothing subtracted (the recorder's rule)
            else:
                heap = s.heap_bytes - b.heap_bytes
            for key, attr in (("rss", "rss_bytes"), ("pss", "pss_bytes")):
                x, y = getattr(b, attr), getattr(s, attr)
                if x < 0 or y < 0:
                    continue
                acc = sums[key]
                acc[0] += y - x - heap
                acc[1] = max(acc[1], acc[0])
                acc[2] = True
    for key, (_, top, measured) in sums.items():
        out[key] = top if measured else None
    return out


def peak(samples, attr: str) -> Optional[dict]:
    """The first sample with the highest measured value (-1 = not measured), or None."""
    best = None
    for s in samples:
        v = getattr(s, attr)
        if v >= 0 and (best is None or v > getattr(best, attr)):
            best = s
    if best is None:
        return None
    return dict(bytes=getattr(best, attr), at_s=best.mono_ns / NS, region=best.region,
                kind=best.kind)


def region_spans(samples) -> List[dict]:
    """Region begin/end samples paired (process-wide regions nest like a stack), in order of
    beginning. A region still open at the last sample has end_s None."""
    spans: List[dict] = []
    open_: List[dict] = []
    for s in samples:
        if s.kind == "region-begin":
            span = dict(region=s.region, name=s.label, depth=len(open_), begin_s=s.mono_ns / NS,
                        end_s=None, heap_begin=_known(s.heap_bytes), heap_end=None,
                        rss_begin=_known(s.rss_bytes), rss_end=None)
            spans.append(span)
            open_.append(span)
        elif s.kind == "region-end":
            # the innermost open span of this region (it is the innermost unless samples were lost)
            for i in range(len(open_) - 1, -1, -1):
                if open_[i]["region"] == s.region:
                    span = open_.pop(i)
                    span.update(end_s=s.mono_ns / NS, heap_end=_known(s.heap_bytes),
                                rss_end=_known(s.rss_bytes))
                    break
    return spans


# ---- a job: the ranks on one time axis ----

def sample_columns(tl: Optional[Timeline]) -> Optional[tuple]:
    """The samples as int64 numpy columns (COLUMNS), sorted by time; None without samples."""
    if tl is None or not tl.samples:
        return None
    import numpy as np   # here: the timeline command works without numpy
    samples = sorted(tl.samples, key=lambda s: s.mono_ns)
    row = attrgetter(*COLUMNS)
    table = np.array([row(s) for s in samples], dtype=np.int64)
    return tuple(table[:, i].copy() for i in range(len(COLUMNS)))


def bin_max(t, v, edges):
    """Largest value per bin (see job_timelines); t sorted ascending."""
    import numpy as np
    points = len(edges) - 1
    out = np.full(points, -1, dtype=np.int64)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, points - 1)
    np.maximum.at(out, idx, v)
    before = np.searchsorted(t, edges[:-1], side="left") - 1   # last sample before each bin
    held = np.where(before >= 0, v[np.maximum(before, 0)], 0)
    out = np.maximum(out, held)
    out[edges[:-1] > t[-1]] = 0          # the rank had ended
    out[out < 0] = 0
    return out


def job_timelines(ranks: Sequence, points: int = 200) -> Optional[dict]:
    """Per-rank and summed timelines of a job; None when no rank has samples.

    ranks: analysis.job.RankSummary with .timeline = sample_columns(). Each rank's
    samples are placed at (start_real_ns + mono_ns) - the earliest start of any rank,
    in seconds, and reduced onto a common grid of `points` bins from 0 to the last
    sample of the job: a bin holds the largest value the rank had in it (samples in the
    bin, and the value held from the sample before the bin), so no peak falls between
    two grid points. A rank has 0 before its first sample and after its last (it had
    not started, or had ended). The aggregate is the sum over the ranks of their bin
    values (for bins where ranks peak at different moments, an upper bound of the
    job's total).

    Series: app = heap_bytes - heap_mpi_bytes (0 when negative: blocks the program
    allocated and the MPI library freed, or the other way round, make the two parts
    drift by a few KB), mpi = heap_mpi_bytes, rss, pss (the program's), recorder (the
    recorder's own memory) (samples with -1, not measured, are left out; a series with
    no measured sample is None; app and mpi of a rank recorded without the MPI layer are
    None: no split)."""
    import numpy as np
    having = [r for r in ranks if r.timeline is not None and len(r.timeline[0])]
    if not having:
        return None
    start = min(r.start_real_ns for r in having)
    times = {}
    end = 0.0
    for r in having:
        t = (np.asarray(r.timeline[0], dtype=np.float64) + (r.start_real_ns - start)) / NS
        times[r.rank] = t
        end = max(end, float(t[-1]))
    end = end if end > 0 else 1e-9
    edges = np.linspace(0.0, end, points + 1)
    per_rank: List[dict] = []
    total = {k: np.zeros(points, dtype=np.int64) for k in JOB_SERIES}
    present = {k: False for k in JOB_SERIES}
    for r in having:
        _, heap, heap_mpi, rss, pss, recorder = (np.asarray(c, dtype=np.int64) for c in r.timeline)
        t = times[r.rank]
        row = dict(rank=r.rank, host=r.host, samples=len(t), first_s=float(t[0]),
                   last_s=float(t[-1]))
        # < 0 when MPI freed blocks the program allocated; -1 where heap was not measured,
        # and everywhere without the MPI layer (no split: analysis.job.mpi_layer_seen)
        app = np.where(heap >= 0, np.maximum(heap - heap_mpi, 0), -1)
        if not getattr(r, "mpi_layer", True):
            app = heap_mpi = np.full(len(heap), -1, dtype=np.int64)
        for key, values in (("app", app), ("mpi", heap_mpi), ("rss", rss), ("pss", pss),
                            ("recorder", recorder)):
            keep = values >= 0
            if not keep.any():
                row[key] = None
                continue
            binned = bin_max(t[keep], values[keep], edges)
            row[key] = binned.tolist()
            total[key] += binned
            present[key] = True
        per_rank.append(row)
    return dict(start_real_ns=start, end_s=end, points=points,
                seconds=[float(x) for x in edges[:-1]],
                per_rank=per_rank,
                total={k: (total[k].tolist() if present[k] else None) for k in JOB_SERIES})


def rank_envelopes(tl: dict) -> dict:
    """Per series of job_timelines(): the lowest and the highest rank value in each bin
    ({"min": [...], "max": [...]}), None where no rank measured the series."""
    import numpy as np
    out = {}
    for key in JOB_SERIES:
        rows = [r[key] for r in tl["per_rank"] if r.get(key) is not None]
        if not rows:
            out[key] = None
            continue
        m = np.array(rows, dtype=np.int64)
        out[key] = dict(min=m.min(axis=0).tolist(), max=m.max(axis=0).tolist())
    return out


def sampled_columns(proc: dict, max_points: int):
    """(seconds, {series: int64 column, -1 = not measured}, reduced) of one process of the
    `timeline` document, by time. With more than max_points samples, each column is
    reduced to max_points equal bins holding each bin's largest value (bin_max), so no
    peak is lost; seconds are then the bins' starts."""
    import numpy as np
    samples = proc["samples"]
    series = COLUMNS[1:]
    t = np.array([s["mono_ns"] for s in samples], dtype=np.int64)
    order = np.argsort(t, kind="stable")
    t = t[order]
    # (a series a document lacks, e.g. recorder_bytes before it was measured: not measured)
    cols = {k: np.array([-1 if s.get(k) is None else s[k] for s in samples], dtype=np.int64)[order]
            for k in series}
    if len(t) <= max_points:
        return (t / NS).tolist(), cols, False
    edges = np.linspace(float(t[0]), float(t[-1]), max_points + 1)

    def reduce(v):
        keep = v >= 0
        if not keep.any():
            return np.full(max_points, -1, dtype=np.int64)
        return bin_max(t[keep].astype(np.float64), v[keep], edges)
    return (edges[:-1] / NS).tolist(), {k: reduce(v) for k, v in cols.items()}, True
