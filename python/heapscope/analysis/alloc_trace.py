"""The allocator's event trace replayed (profile/hsmalloc_trace.py): what hsmalloc did with
its memory over time. Address space mapped (map - unmap), segments held by heaps
(seg_new + seg_reuse - seg_free), pages in use (page_new - page_free), bytes given back
(purge), each with its peak and when, its end value, and a downsampled series; the
pressure levels seen and how long each lasted; per heap, what it took and gave back.

Documents only: figures with their keys; no text."""
from typing import Dict, List

import numpy as np

from heapscope.profile.hsmalloc_trace import KINDS, Trace

LEVELS = ("none", "some", "high", "critical")


def _mask(tr: Trace, *names: str) -> np.ndarray:
    return np.isin(tr.kind, [KINDS.index(n) for n in names])


def _running(tr: Trace, plus: np.ndarray, minus: np.ndarray, weights: np.ndarray) -> Dict:
    """A quantity replayed event by event: its peak, when, and its end value."""
    step = np.where(plus, weights, 0) - np.where(minus, weights, 0)
    level = np.cumsum(step)
    if not len(level):
        return {"peak": 0, "peak_t_us": None, "end": 0}
    at = int(np.argmax(level))
    peak = int(level[at])
    return {"peak": max(peak, 0), "peak_t_us": int(tr.t_us[at]) if peak > 0 else None,
            "end": int(level[-1])}


def _series(tr: Trace, points: int) -> Dict[str, List[int]]:
    """The replayed quantities at up to `points` evenly spaced event indices (the last included)."""
    n = len(tr.t_us)
    if not n:
        return {"t_us": [], "mapped": [], "page_bytes": [], "purged": []}
    idx = np.unique(np.linspace(0, n - 1, min(points, n)).astype(np.int64))
    b = tr.bytes

    def run(plus, minus):
        return np.cumsum(np.where(plus, b, 0) - np.where(minus, b, 0))[idx].tolist()

    none = np.zeros(n, bool)
    return {"t_us": tr.t_us[idx].tolist(),
            "mapped": run(_mask(tr, "map"), _mask(tr, "unmap")),
            "page_bytes": run(_mask(tr, "page_new"), _mask(tr, "page_free")),
            "purged": run(_mask(tr, "purge"), none)}


def _pressure(tr: Trace) -> Dict:
    """Level changes (time, level, headroom per mille) and the time spent at each level,
    from the first reading to the last event."""
    at = np.flatnonzero(tr.kind == KINDS.index("pressure"))
    changes, spent = [], [0, 0, 0, 0]
    last_level, last_t = None, None
    for i in at:
        level, t = int(tr.value[i]), int(tr.t_us[i])
        if last_level is not None and 0 <= last_level < 4:
            spent[last_level] += t - last_t
        if level != last_level:
            changes.append({"t_us": t, "level": level, "headroom_permille": int(tr.bytes[i])})
        last_level, last_t = level, t
    if last_level is not None and 0 <= last_level < 4:
        spent[last_level] += int(tr.t_us[-1]) - last_t
    return {"readings": int(len(at)), "changes": changes,
            "time_at_level_us": dict(zip(LEVELS, spent)) if len(at) else None}


def _heaps(tr: Trace) -> List[Dict]:
    rows = []
    for heap in np.unique(tr.heap[tr.heap >= 0]):
        mine = tr.heap == heap

        def count(name):
            return int(np.count_nonzero(mine & (tr.kind == KINDS.index(name))))

        def total(name):
            return int(tr.bytes[mine & (tr.kind == KINDS.index(name))].sum())

        rows.append({"heap": int(heap), "segments_new": count("seg_new"),
                     "segments_reused": count("seg_reuse"), "segments_freed": count("seg_free"),
                     "pages_taken": count("page_new"), "page_bytes_taken": total("page_new"),
                     "pages_given_back": count("page_free"), "page_bytes_given_back": total("page_free")})
    rows.sort(key=lambda r: -r["page_bytes_taken"])
    return rows


def build_alloc_trace(tr: Trace, points: int = 200) -> Dict:
    ones = np.ones(len(tr.kind), np.int64)
    kinds = [{"event": name, "count": int(np.count_nonzero(tr.kind == i)),
              "bytes": None if name == "pressure" else int(tr.bytes[tr.kind == i].sum())}
             for i, name in enumerate(KINDS)]
    return {
        "format": "heapscope-alloc-trace", "version": 1, "file": tr.path, "pid": tr.pid,
        "events": int(len(tr.kind)),
        "duration_us": int(tr.t_us[-1]) if len(tr.t_us) else 0,
        "cut_line": tr.cut_line,
        "kinds": kinds,
        "mapped_bytes": _running(tr, _mask(tr, "map"), _mask(tr, "unmap"), tr.bytes),
        "heap_segments": _running(tr, _mask(tr, "seg_new", "seg_reuse"), _mask(tr, "seg_free"), ones),
        "pages": _running(tr, _mask(tr, "page_new"), _mask(tr, "page_free"), ones),
        "page_bytes": _running(tr, _mask(tr, "page_new"), _mask(tr, "page_free"), tr.bytes),
        "purged_bytes": int(tr.bytes[_mask(tr, "purge")].sum()),
        "purges": int(np.count_nonzero(_mask(tr, "purge"))),
        "pressure": _pressure(tr),
        "heaps": _heaps(tr),
        "series": _series(tr, points),
    }
