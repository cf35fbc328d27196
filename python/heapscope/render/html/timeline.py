"""Section 5, timeline: heap, RSS and PSS over the run with the region spans (the
`timeline` document, per process); for an MPI job, every rank's application and MPI
heap, RSS and PSS on the job's common grid, their sum, the min/max envelope over the
ranks, and the rank table (the `job` document).

The page carries samples as columns (seconds, heap, ...; an unreadable value as null).
A process with more than MAX_POINTS samples is reduced to MAX_POINTS bins holding each
bin's largest value (analysis.timeline's binning for jobs), so no peak is lost."""
from typing import Dict, List, Optional

import numpy as np

from heapscope.analysis.timeline import JOB_SERIES, _bin_values

ID, TITLE, SCRIPT = "timeline", "Timeline", "timeline.js"
MAX_POINTS = 100_000
COLUMNS = ("heap_bytes", "heap_mpi_bytes", "rss_bytes", "pss_bytes")


def _nulls(values: np.ndarray) -> List[Optional[int]]:
    return [None if v < 0 else int(v) for v in values.tolist()]


def process_columns(proc: dict) -> dict:
    samples = proc["samples"]
    t = np.array([s["mono_ns"] for s in samples], dtype=np.int64)
    order = np.argsort(t, kind="stable")
    t = t[order]
    cols = {k: np.array([s[k] for s in samples], dtype=np.int64)[order] for k in COLUMNS}
    reduced = len(t) > MAX_POINTS
    if reduced:
        edges = np.linspace(float(t[0]), float(t[-1]), MAX_POINTS + 1)
        cols = {k: _reduce(t, v, edges) for k, v in cols.items()}
        seconds = (edges[:-1] / 1e9).tolist()
    else:
        seconds = (t / 1e9).tolist()
    keep = ("path", "pid", "rank", "host", "exe", "label", "complete", "warnings", "interval_ns",
            "heap_measure", "duration_s", "sample_count", "peaks", "calipers", "regions")
    return dict({k: proc[k] for k in keep}, reduced_to=MAX_POINTS if reduced else None,
                seconds=seconds, **{k: _nulls(v) for k, v in cols.items()})


def _reduce(t: np.ndarray, v: np.ndarray, edges: np.ndarray) -> np.ndarray:
    keep = v >= 0
    if not keep.any():
        return np.full(len(edges) - 1, -1, dtype=np.int64)
    return _bin_values(t[keep].astype(np.float64), v[keep], edges)


def job_data(job: dict) -> Optional[dict]:
    tl = job.get("timeline")
    if not tl:
        return None
    envelopes: Dict[str, Optional[dict]] = {}
    for key in JOB_SERIES:
        rows = [r[key] for r in tl["per_rank"] if r[key] is not None]
        if not rows:
            envelopes[key] = None
            continue
        m = np.array(rows, dtype=np.int64)
        envelopes[key] = dict(min=m.min(axis=0).tolist(), max=m.max(axis=0).tolist())
    return dict(tl, envelopes=envelopes)


def data(docs: dict) -> dict:
    timeline, job = docs["timeline"], docs["job"]
    out: Dict[str, object] = {}
    if "absent" in job:
        out["job"] = None
    else:
        out["job"] = dict(job_id=job["job_id"], ranks=job["ranks"], hosts=job["hosts"],
                          metrics=job["metrics"], per_rank=job["per_rank"], stats=job["stats"],
                          regions=job["regions"], warnings=job["warnings"], notes=job["notes"],
                          timeline=job_data(job))
    if "absent" in timeline:
        out["processes"] = []
        if out["job"] is None or out["job"]["timeline"] is None:
            out["absent"] = timeline["absent"]
    else:
        out["processes"] = [process_columns(p) for p in timeline["processes"]]
    return out
