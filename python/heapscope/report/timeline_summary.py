"""The `heapscope timeline` document, as plain data: per process, its samples, the peaks
of heap, RSS and PSS (value, when, in which region), the region spans paired from the
boundary samples, and the MPI calipers' totals. Layout: docs/analysis-formats.md.
"""
from typing import List, Optional

from heapscope.profile.model import Profile, Timeline

TIMELINE_FORMAT = "heapscope-timeline"
TIMELINE_VERSION = 1
NS = 1e9
# (key in "peaks", Sample attribute)
SERIES = (("heap", "heap_bytes"), ("heap_mpi", "heap_mpi_bytes"), ("rss", "rss_bytes"),
          ("pss", "pss_bytes"))


def document(profiles: List[Profile]) -> dict:
    return dict(format=TIMELINE_FORMAT, version=TIMELINE_VERSION,
                processes=[process_doc(p) for p in profiles])


def process_doc(p: Profile) -> dict:
    tl: Timeline = p.timeline
    samples = tl.samples
    return dict(
        path=p.path, pid=p.pid, rank=p.rank, host=p.host, exe=p.exe, label=p.label,
        start_real_ns=p.start_real_ns, complete=p.complete, warnings=list(p.warnings),
        interval_ns=tl.interval_ns, heap_measure=tl.heap_measure,
        duration_s=(samples[-1].mono_ns / NS) if samples else 0.0,
        sample_count=len(samples),
        kinds={k: sum(1 for s in samples if s.kind == k) for k in sorted({s.kind for s in samples})},
        peaks={key: _peak(samples, attr) for key, attr in SERIES},
        calipers=dict(taken=tl.calipers_taken, skipped=tl.calipers_skipped,
                      mpi_rss_delta_bytes=tl.mpi_rss_delta_bytes,
                      mpi_pss_delta_bytes=tl.mpi_pss_delta_bytes),
        regions=region_spans(samples),
        samples=[dict(mono_ns=s.mono_ns, kind=s.kind, region=s.region, label=s.label,
                      heap_bytes=s.heap_bytes, heap_mpi_bytes=s.heap_mpi_bytes,
                      rss_bytes=s.rss_bytes, pss_bytes=s.pss_bytes) for s in samples])


def _peak(samples, attr: str) -> Optional[dict]:
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
                        end_s=None, heap_begin=s.heap_bytes, heap_end=None,
                        rss_begin=s.rss_bytes, rss_end=None)
            spans.append(span)
            open_.append(span)
        elif s.kind == "region-end":
            # the innermost open span of this region (it is the innermost unless samples were lost)
            for i in range(len(open_) - 1, -1, -1):
                if open_[i]["region"] == s.region:
                    span = open_.pop(i)
                    span.update(end_s=s.mono_ns / NS, heap_end=s.heap_bytes, rss_end=s.rss_bytes)
                    break
    return spans
