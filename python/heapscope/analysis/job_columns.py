"""The job file's rank rows in the job report as numpy columns, never one object per rank.

A job file of 10^5 ranks made 10^5 RankSummary objects, their per-rank dicts and
their JSON one by one (2.5-2.9 s). Here the rows that stand alone (JobBlock) stay
columns end to end: statistics (min/max with the lowest rank on ties, an exact mean),
hosts, missing rank numbers, and the document's per_rank list (RankRows), whose
dicts are made only for the rows looked at and whose JSON text is made by columns.

A row is kept out of the block, as a RankSummary through the general code
(analysis.job), when it meets a file read beside the job file: the same rank number,
the same (host, pid) or a (host, ppid) naming it (the choice of a rank's process and
the roles of the other processes look at those), or a host with a process of pid 0
(a row's ppid is 0). Its figures are the same either way: analysis.job.rank_row
makes both kinds of row.
"""
from bisect import bisect_left
from collections import abc
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from heapscope.profile.job_file import PRESENT_HEAP_EXACT, JobFile


class JobBlock:
    """The job file's rows that stand alone, sorted by rank: rank, host (index into
    host_names), pid, and per metric (values int64, have bool)."""

    def __init__(self, job: JobFile, rows: np.ndarray, columns: Dict[str, Tuple[np.ndarray, np.ndarray]]):
        order = np.argsort(job.rows["rank"][rows], kind="stable")
        rows = rows[order]
        self.job = job
        self.host_names = [h["host"] for h in job.hosts]
        self.rank = job.rows["rank"][rows].astype(np.int64)
        self.host = job.rows["host"][rows].astype(np.int64)
        self.pid = job.rows["pid"][rows].astype(np.int64)
        self.heap_exact = (job.rows["present"][rows] & PRESENT_HEAP_EXACT) != 0
        self.metrics = {k: (v[rows], have[rows]) for k, (v, have) in columns.items()}

    def __len__(self) -> int:
        return len(self.rank)

    def present(self, key: str) -> bool:
        m = self.metrics.get(key)
        return m is not None and bool(m[1].any())

    def heap_sampled(self) -> bool:
        """Some row's heap peaks are the largest samples (a lower bound), not exact."""
        m = self.metrics.get("heap_peak")
        return m is not None and bool((m[1] & ~self.heap_exact).any())

    def hosts(self) -> List[str]:
        return [self.host_names[h] for h in np.unique(self.host).tolist()]

    def summary(self, i: int, make: Callable):
        """Row i as a RankSummary (make: analysis.job_loading.job_row_summary)."""
        metrics = {k: int(v[i]) if have[i] else None for k, (v, have) in self.metrics.items()}
        return make(self.job, int(self.rank[i]), self.host_names[self.host[i]], int(self.pid[i]), metrics,
                    bool(self.heap_exact[i]))


def split_job_rows(job: JobFile, summaries: Sequence, make: Callable) -> Tuple[Optional[JobBlock], list]:
    """The job file's rows for the ranks whose own file was not read (those with the
    job's id among `summaries` are left out): (the block of rows standing alone, or
    None; RankSummary objects, in file order, for the rows that meet a file read)."""
    rows = job.rows
    rank = rows["rank"].astype(np.int64)
    own = [s.rank for s in summaries if s.rank >= 0 and s.job_id == job.job_id]
    keep = ~np.isin(rank, own) if own else np.ones(len(rows), dtype=bool)
    touch = np.zeros(len(rows), dtype=bool)
    if summaries:
        touch |= np.isin(rank, [s.rank for s in summaries if s.rank >= 0])
        index: Dict[str, List[int]] = {}
        for i, h in enumerate(job.hosts):
            index.setdefault(h["host"], []).append(i)
        keys, zero_hosts = set(), set()
        for s in summaries:
            for h in index.get(s.host, ()):
                keys.update(((h << 32) | (p & 0xFFFFFFFF)) for p in (s.pid, s.ppid) if p >= 0)
                if s.pid == 0:
                    zero_hosts.add(h)
        host = rows["host"].astype(np.int64)
        if keys:
            touch |= np.isin((host << 32) | rows["pid"].astype(np.int64), list(keys))
        if zero_hosts:
            touch |= np.isin(host, list(zero_hosts))
    try:
        columns = job.rank_columns()
    except OverflowError:        # counts past 2^62: the exact Python ints, one object a row
        touch[:] = True
        columns = None
    alone = np.flatnonzero(keep & ~touch)
    block = JobBlock(job, alone, columns) if alone.size else None
    met = np.flatnonzero(keep & touch).tolist()
    if not met:
        return block, []
    ranks = job.ranks if columns is None else None
    out = []
    for i in met:
        if ranks is not None:
            r = ranks[i]
            out.append(make(job, r.rank, r.host, r.pid, r.metrics, r.heap_exact))
        else:
            metrics = {k: int(v[i]) if have[i] else None for k, (v, have) in columns.items()}
            out.append(make(job, int(rows["rank"][i]), job.hosts[rows["host"][i]]["host"],
                            int(rows["pid"][i]), metrics,
                            bool(rows["present"][i] & PRESENT_HEAP_EXACT)))
    return block, out


def _exact_sum(v: np.ndarray) -> int:
    """Sum of int64 values as a Python int, exact past 2^63 (a sum over 10^5 ranks
    of byte counts can pass it): high and low 32 bits summed apart."""
    return (int((v >> 32).sum()) << 32) + int((v & 0xFFFFFFFF).sum())


def stats(objects: Sequence, block: Optional[JobBlock], keys: Sequence[str]) -> Dict[str, Optional[dict]]:
    """Per metric over the ranks that have it (RankSummary objects and the block):
    min and max with their rank and host (on ties the lowest rank), mean, count. The
    same figures as analysis.job._stats over every rank as an object."""
    out: Dict[str, Optional[dict]] = {}
    for k in keys:
        cands = []               # (value, rank, host) of the minimum, and of the maximum
        total, n = 0, 0
        values = [(r.metrics[k], r.rank, r.host) for r in objects if r.metrics[k] is not None]
        if values:
            lo = min(values, key=lambda t: (t[0], t[1]))
            hi = max(values, key=lambda t: (t[0], -t[1]))
            cands.append((lo, hi))
            total, n = sum(t[0] for t in values), len(values)
        if block is not None and k in block.metrics:
            v, have = block.metrics[k]
            idx = np.flatnonzero(have)
            if idx.size:
                v = v[idx]
                # the block is sorted by rank: the first extreme has the lowest rank
                i, j = int(idx[int(v.argmin())]), int(idx[int(v.argmax())])
                host = block.host_names
                cands.append(((int(block.metrics[k][0][i]), int(block.rank[i]), host[block.host[i]]),
                              (int(block.metrics[k][0][j]), int(block.rank[j]), host[block.host[j]])))
                total, n = total + _exact_sum(v), n + int(idx.size)
        if not n:
            out[k] = None
            continue
        lo = min((c[0] for c in cands), key=lambda t: (t[0], t[1]))
        hi = max((c[1] for c in cands), key=lambda t: (t[0], -t[1]))
        out[k] = dict(min=lo[0], min_rank=lo[1], min_host=lo[2], max=hi[0], max_rank=hi[1],
                      max_host=hi[2], mean=total / n, ranks=n)
    return out


def host_figures(objects: Sequence, block: Optional[JobBlock]) -> List[dict]:
    """Per host of the ranks reported (RankSummary objects and the block's rows): its
    ranks, and the sum and largest of their RSS and PSS peaks (the program's) and of
    their recorder's own memory peaks (None: no rank of the host has the figure) — the per-rank figures added up, so that a host's largest is one of
    its ranks' in the per-rank table (the job file's JOB_HOSTS were summed at
    MPI_Finalize, before a kept rank's later samples)."""
    acc: Dict[str, dict] = {}

    def entry(host: str) -> dict:
        return acc.setdefault(host, dict(host=host, ranks=0, rss_sum=None, rss_max=None,
                                         pss_sum=None, pss_max=None, recorder_sum=None,
                                         recorder_max=None))

    def add(e: dict, key: str, total: int, top: int) -> None:
        e[f"{key}_sum"] = total + (e[f"{key}_sum"] or 0)
        e[f"{key}_max"] = top if e[f"{key}_max"] is None else max(top, e[f"{key}_max"])

    for r in objects:
        e = entry(r.host)
        e["ranks"] += 1
        for key in ("rss", "pss", "recorder"):
            v = r.metrics.get(f"{key}_peak")
            if v is not None:
                add(e, key, v, v)
    if block is not None and len(block):
        hosts = block.host
        counts = np.bincount(hosts, minlength=len(block.host_names))
        for h in np.flatnonzero(counts).tolist():
            entry(block.host_names[h])["ranks"] += int(counts[h])
        for key in ("rss", "pss", "recorder"):
            values, have = block.metrics.get(f"{key}_peak", (None, None))
            if values is None:
                continue
            for h in np.unique(hosts[have]).tolist():
                mine = values[have & (hosts == h)]
                add(entry(block.host_names[h]), key, _exact_sum(mine), int(mine.max()))
    return sorted(acc.values(), key=lambda e: e["host"])


MISSING_LISTED = 10_000    # missing rank numbers listed; the count says how many in all


def missing(seen: Sequence[int], block: Optional[JobBlock], launched: int) -> Tuple[List[int], int]:
    """Rank numbers without a row or a file, below the highest one seen or the count
    the launcher (or the job file) says: the first MISSING_LISTED, and how many in all.
    Walked gap by gap over the ranks seen: a job's size read from a file (2^31 - 1 in a
    crafted one) allocates nothing in proportion."""
    ranks = np.asarray(list(seen), dtype=np.int64)
    if block is not None:
        ranks = np.concatenate([ranks, block.rank])
    ranks = np.unique(ranks[ranks >= 0])
    if not ranks.size and not launched:
        return [], 0
    end = max(int(ranks[-1]) + 1 if ranks.size else 0, launched)
    listed: List[int] = []
    before = -1
    for r in ranks.tolist() + [end]:
        if len(listed) >= MISSING_LISTED:
            break
        listed.extend(range(before + 1, min(r, before + 1 + MISSING_LISTED - len(listed))))
        before = r
    return listed, end - int(ranks.size)


class RankRows(abc.Sequence):
    """The document's per_rank list: the objects' rows (dicts, made as always) and the
    block's (made when looked at), in rank order. JSON: tolist(), or json_text() by
    columns, the same text as json.dumps of the list."""

    def __init__(self, rows: List[dict], block: Optional[JobBlock], make_row: Callable[[int], dict]):
        self._rows = rows
        self._block = block
        self._make_row = make_row           # block index -> its dict
        n_block = len(block) if block is not None else 0
        at = np.searchsorted(block.rank, [r["rank"] for r in rows]) if n_block else np.zeros(len(rows), int)
        self._pos = [i + int(a) for i, a in enumerate(at)]     # the objects' places, ascending
        self._len = len(rows) + n_block

    def __len__(self) -> int:
        return self._len

    def _one(self, i: int) -> dict:
        k = bisect_left(self._pos, i)
        if k < len(self._pos) and self._pos[k] == i:
            return self._rows[k]
        return self._make_row(i - k)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._one(j) for j in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("rank row index out of range")
        return self._one(i)

    def __iter__(self):
        return (self._one(i) for i in range(self._len))

    def __eq__(self, other):
        return list(self) == list(other) if isinstance(other, (list, RankRows)) else NotImplemented

    def tolist(self) -> List[dict]:
        return list(self)

    def with_warnings(self) -> List[dict]:
        """The rows with warnings (the block's rows have none)."""
        return [r for r in self._rows if r["warnings"]]

    def json_text(self, dumps: Callable) -> str:
        """dumps(self.tolist())."""
        return "".join(self.json_pieces(dumps))

    def json_pieces(self, dumps: Callable) -> List[str]:
        """json_text() in pieces (tens of MB for 10^5 ranks: the caller joins them once),
        the block's rows by columns: one %-template of the row (its constant fields
        written once) filled from one list per varying field (Python ints: %s writes
        them as json does; _NULL where a figure is missing)."""
        b = self._block
        if b is None or not len(b):
            return [dumps(self._rows)]
        sample = self._make_row(0)
        names = [dumps(h) for h in b.host_names]
        varying = {"rank": b.rank.tolist(), "host": [names[h] for h in b.host.tolist()],
                   "pid": b.pid.tolist()}
        for k, (v, have) in b.metrics.items():
            if k in sample:
                values = v.tolist()
                for i in np.flatnonzero(~have).tolist():
                    values[i] = _NULL
                varying[k] = values
        parts, columns = [], []
        for key, value in sample.items():
            if key in varying:
                parts.append(f"{dumps(key)}:%s")
                columns.append(varying[key])
            else:
                parts.append(f"{dumps(key)}:{dumps(value)}".replace("%", "%%"))
        template = "{" + ",".join(parts) + "},"          # (each row with its comma)
        texts = [template % t for t in zip(*columns)]
        if self._rows:
            merged, done = [], 0
            for k, (pos, row) in enumerate(zip(self._pos, self._rows)):
                merged += texts[done:pos - k]          # the block's rows before this object's
                merged.append(dumps(row) + ",")
                done = pos - k
            texts = merged + texts[done:]
        texts[-1] = texts[-1][:-1] + "]"
        return ["["] + texts


class _Null:
    """A missing figure in RankRows.json_text's template: %s writes null."""

    def __str__(self) -> str:
        return "null"


_NULL = _Null()
