"""Per-rank and summed timelines of a job, on one time axis.

Each rank's samples are placed at (start_real_ns + mono_ns) - the earliest start of
any rank, in seconds, and reduced onto a common grid of `points` bins from 0 to the
last sample of the job: a bin holds the largest value the rank had in it (samples in
the bin, and the value held from the sample before the bin), so no peak falls between
two grid points. A rank has 0 before its first sample and after its last (it had not
started, or had ended). The aggregate is the sum over the ranks of their bin values
(for bins where ranks peak at different moments, an upper bound of the job's total).

Series: app = heap_bytes - heap_mpi_bytes (0 when negative: blocks the program
allocated and the MPI library freed, or the other way round, make the two parts
drift by a few KB), mpi = heap_mpi_bytes, rss, pss (samples with -1, unreadable, are
left out; a series with no readable sample is None).
"""
from typing import List, Optional, Sequence

import numpy as np

SERIES = ("app", "mpi", "rss", "pss")


def _bin_values(t: np.ndarray, v: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Largest value per bin (see the module text); t sorted ascending."""
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
    """ranks: analysis.job.RankSummary with .timeline columns; None when no rank has samples."""
    having = [r for r in ranks if r.timeline is not None and len(r.timeline[0])]
    if not having:
        return None
    start = min(r.start_real_ns for r in having)
    times = {}
    end = 0.0
    for r in having:
        t = (np.asarray(r.timeline[0], dtype=np.float64) + (r.start_real_ns - start)) / 1e9
        times[r.rank] = t
        end = max(end, float(t[-1]))
    end = end if end > 0 else 1e-9
    edges = np.linspace(0.0, end, points + 1)
    per_rank: List[dict] = []
    total = {k: np.zeros(points, dtype=np.int64) for k in SERIES}
    present = {k: False for k in SERIES}
    for r in having:
        _, heap, heap_mpi, rss, pss = (np.asarray(c, dtype=np.int64) for c in r.timeline)
        t = times[r.rank]
        row = dict(rank=r.rank, host=r.host, samples=len(t), first_s=float(t[0]),
                   last_s=float(t[-1]))
        app = np.maximum(heap - heap_mpi, 0)   # < 0 when MPI freed blocks the program allocated
        for key, values in (("app", app), ("mpi", heap_mpi), ("rss", rss), ("pss", pss)):
            keep = values >= 0
            if not keep.any():
                row[key] = None
                continue
            binned = _bin_values(t[keep], values[keep], edges)
            row[key] = binned.tolist()
            total[key] += binned
            present[key] = True
        per_rank.append(row)
    return dict(start_real_ns=start, end_s=end, points=points,
                seconds=[float(x) for x in edges[:-1]],
                per_rank=per_rank,
                total={k: (total[k].tolist() if present[k] else None) for k in SERIES})
