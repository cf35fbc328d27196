"""The `heapscope access` document: memory allocated and not used (record --access).

The recorder measured the pages of the sampled blocks (profile/access.py): per call
path, how many samples, how many of them it measured, the bytes of those on pages read
or written, the ones never touched, read before written, their first touch. Here those
sample figures become estimates for all the allocations, with the statistics of the
sampled stacks (analysis/sampling.py), cell by cell (one size in one region, processes
merged): T allocations counted exactly, K of them samples, K_m of those measured.

- blocks of a path: T k / K (k its samples), the exact hypergeometric interval;
- a count among its measured blocks (never touched, read before written): T x / K_m,
  the hypergeometric interval of x in K_m draws from T;
- touched bytes: T / K_m times the sampled blocks' touched bytes. A block's touched
  share lies in [0, 1]; a sum of such shares spreads at most like the count of blocks
  wholly touched or not (Hoeffding: sampling [0, 1] values without replacement is
  dominated in convex order by the 0/1 case), so the interval is that count's, taken
  at the sum of shares rounded outwards, times the size. Untouched bytes likewise, from
  the shares' complement.
- sums over cells (a region, the totals, a rank) are estimates without an interval.

A path is identified by its symbolized frames (analysis.stacks.identity), so a path
seen by several threads or processes is one entry. With by="size" the entries are the
cells themselves (the blocks then exact). Paths are listed by the bytes that could be
given back (untouched), the largest first.
"""
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from heapscope.analysis import sampling
from heapscope.analysis.processes import describe
from heapscope.analysis.recorded import require_recorded
from heapscope.analysis.selection import SizeSet, check_region, region_matches
from heapscope.analysis.stacks import identity
from heapscope.profile.model import ACCESS_BINS, Profile
from heapscope.symbolize import Frame, Symbolizer

ACCESS_FORMAT, VERSION = "heapscope-access", 1
_COUNTS = ("samples", "measured", "live", "touched_bytes", "never_touched", "read_first",
           "zeroed", "huge")


@dataclass
class _Entry:
    region: str
    size: int
    frames: Tuple[Frame, ...]
    counts: Dict[str, int] = field(default_factory=lambda: dict.fromkeys(_COUNTS, 0))
    after: List[int] = field(default_factory=lambda: [0] * ACCESS_BINS)
    by: List[int] = field(default_factory=lambda: [0] * ACCESS_BINS)

    def add(self, row) -> None:
        for c in _COUNTS:
            self.counts[c] += getattr(row, c)
        self.after = [a + b for a, b in zip(self.after, row.after_hist)]
        self.by = [a + b for a, b in zip(self.by, row.by_hist)]


def require_access(profiles: Sequence[Profile]) -> List[Profile]:
    """The profiles recorded with --access; none -> one line saying how to record them."""
    return require_recorded(profiles, lambda p: p.access is not None, "memory access data",
                            "--access")


def _entries(profiles: Sequence[Profile], sizes: SizeSet, region: Optional[str], by: str,
             sym: Symbolizer) -> Dict[tuple, _Entry]:
    out: Dict[tuple, _Entry] = {}
    for p in profiles:
        rows = [r for r in p.access.rows if r.size in sizes and region_matches(r.region, region)]
        resolved = sym.resolve(p, {a for r in rows for a in r.frames}) if by == "type" else {}
        for r in rows:
            frames = tuple(f for a in r.frames for f in resolved[a]) if by == "type" else ()
            key = (r.region, r.size, tuple(identity(f) for f in frames))
            entry = out.get(key)
            if entry is None:
                entry = out[key] = _Entry(r.region, r.size, frames)
            entry.add(r)
    return out


def _cells(profiles: Sequence[Profile]) -> Tuple[Dict[tuple, int], Dict[tuple, List[int]]]:
    """(region, size) -> allocations counted, and -> [samples, measured] over every row."""
    counted: Dict[tuple, int] = {}
    sampled: Dict[tuple, List[int]] = {}
    for p in profiles:
        for key, n in p.size_counts.items():
            counted[key] = counted.get(key, 0) + n
        for r in p.access.rows:
            acc = sampled.setdefault((r.region, r.size), [0, 0])
            acc[0] += r.samples
            acc[1] += r.measured
    return counted, sampled


def count_estimate(x: int, draws: int, total: int, seen: bool) -> dict:
    """x of `draws` sampled blocks of a cell of `total`: the estimate and its interval."""
    if not draws:
        return dict(value=None, low=None, high=None)
    if draws >= total:
        return dict(value=x, low=x, high=x)
    low, high = sampling.hypergeometric_interval(x, draws, total, seen=seen)
    return dict(value=sampling.ratio_estimate(x, draws, total), low=low, high=high)


def bytes_estimate(share: float, draws: int, total: int, size: int, whole: int) -> dict:
    """Bytes from a sum of per-block shares in [0, 1] (touched or untouched): the
    estimate, and the interval of the 0/1 count at that sum (module docstring), between
    the intervals of its two neighbouring whole counts in proportion, times the size.
    Every block measured (draws == total): exact."""
    if not draws:
        return dict(value=None, low=None, high=None)
    value = round(total * share / draws * size)
    if draws >= total:
        return dict(value=value, low=value, high=value)
    lo_k = min(math.floor(share), draws)
    frac = share - lo_k
    hi_k = min(lo_k + 1, draws)

    def interval(k: int) -> Tuple[int, int]:
        return sampling.hypergeometric_interval(k, draws, total, seen=k == whole and k > 0)
    (low0, high0), (low1, high1) = interval(lo_k), interval(hi_k)
    low = (low0 + frac * (low1 - low0)) * size
    high = (high0 + frac * (high1 - high0)) * size
    return dict(value=value, low=min(math.floor(low), value), high=max(math.ceil(high), value))


def _bin_edges(b: int) -> Tuple[int, int]:
    """The ns a first-touch bin holds: [from, to) (bin 0: 0 ns)."""
    return (0, 1) if b == 0 else (1 << (b - 1), 1 << b)


def _median_bin(hist: Sequence[int]) -> Optional[int]:
    n = sum(hist)
    if not n:
        return None
    rank, seen = (n + 1) // 2, 0
    for b, v in enumerate(hist):
        seen += v
        if seen >= rank:
            return b
    return None


def first_touch(after: Sequence[int], by: Sequence[int]) -> dict:
    """The sampled touched blocks' first touch: each lies between the last look that saw
    its block untouched (after) and the first that saw it touched (by), so the median lies
    between the lower edge of the after-median's bin and the upper edge of the by-median's."""
    lo_bin, hi_bin = _median_bin(after), _median_bin(by)
    bins = [dict(from_ns=_bin_edges(b)[0], to_ns=_bin_edges(b)[1], after=after[b], by=by[b])
            for b in range(ACCESS_BINS) if after[b] or by[b]]
    return dict(blocks=sum(by),
                median_ns_low=None if lo_bin is None else _bin_edges(lo_bin)[0],
                median_ns_high=None if hi_bin is None else _bin_edges(hi_bin)[1],
                bins=bins)


def _figures(e: _Entry, total: int, cell: List[int], exact_blocks: bool) -> dict:
    """One entry's estimates (its cell: T counted, [K samples, K_m measured])."""
    c = e.counts
    K, Km = cell
    total = max(total, K)   # counts reset by heapscope_reset while blocks were sampled
    k, m = c["samples"], c["measured"]
    if exact_blocks:
        blocks = dict(value=total, low=total, high=total)
    else:
        low, high = sampling.count_interval(k, K, total)
        blocks = dict(value=sampling.ratio_estimate(k, K, total), low=low, high=high)
    touched_share = c["touched_bytes"] / e.size if e.size else 0.0
    touched = bytes_estimate(touched_share, Km, total, e.size, m)
    untouched = bytes_estimate(m - touched_share, Km, total, e.size, m)
    out = dict(region=e.region, size=e.size, samples=k, measured=m, estimated=True)
    for name, f in (("blocks", blocks),
                    ("bytes", {key: None if v is None else v * e.size for key, v in blocks.items()}),
                    ("touched_bytes", touched), ("untouched_bytes", untouched),
                    ("never_touched_blocks", count_estimate(c["never_touched"], Km, total,
                                                    c["never_touched"] == m and m > 0)),
                    ("read_before_written_blocks", count_estimate(c["read_first"], Km, total,
                                                          c["read_first"] == m and m > 0)),
                    ("live_blocks", count_estimate(c["live"], Km, total, c["live"] == m and m > 0))):
        out[name], out[name + "_low"], out[name + "_high"] = f["value"], f["low"], f["high"]
    out["touched_share"] = (c["touched_bytes"] / (m * e.size)) if m and e.size else None
    out.update(sampled=dict(touched_bytes=c["touched_bytes"], never_touched=c["never_touched"],
                            read_before_written=c["read_first"], zeroed=c["zeroed"],
                            live=c["live"], huge=c["huge"]),
               first_touch=first_touch(e.after, e.by))
    return out


def _sum(rows: Sequence[dict]) -> dict:
    """Estimates added up (no interval); the access figures over the measured entries,
    `unmeasured_blocks` the blocks of entries none of whose samples was measured."""
    out = {name: sum(r[name] for r in rows) for name in ("blocks", "bytes", "samples", "measured")}
    measured = [r for r in rows if r["measured"]]
    for name in ("touched_bytes", "untouched_bytes", "never_touched_blocks",
                 "read_before_written_blocks"):
        out[name] = sum(r[name] for r in measured)
    out["unmeasured_blocks"] = sum(r["blocks"] for r in rows if not r["measured"])
    return out


def _measure(profiles: Sequence[Profile], sizes: SizeSet, region: Optional[str], by: str,
             sym: Symbolizer) -> List[dict]:
    counted, sampled = _cells(profiles)
    rows = []
    for e in _entries(profiles, sizes, region, by, sym).values():
        key = (e.region, e.size)
        rows.append(dict(_figures(e, counted.get(key, 0), sampled[key], by == "size"),
                         frames_total=len(e.frames), _frames=e.frames))
    rows.sort(key=lambda r: (-(r["untouched_bytes"] or 0), -(r["bytes"] or 0), r["size"],
                             r["region"]))
    return rows


def _mechanism(profiles: Sequence[Profile]) -> dict:
    a = profiles[0].access
    names = sorted({p.access.mechanism for p in profiles})
    return dict(pages=names[0] if len(names) == 1 else names, page_size=a.page_size,
                poll_ns=max(p.access.poll_ns for p in profiles),
                sample_mean=sampling.one_mean(profiles), large_bytes=a.large_bytes,
                unmeasured={k: sum(p.access.unmeasured[k] for p in profiles)
                            for k in ("pool", "align", "other")},
                pool_peak_bytes=max(p.access.pool_peak_bytes for p in profiles),
                rows_lost=sum(p.access.rows_lost for p in profiles),
                live_unread=sum(p.access.live_unread for p in profiles))


def _notes(profiles: Sequence[Profile], mech: dict, rows: Sequence[dict], sym: Symbolizer) -> List[str]:
    notes = []
    if "none" in (mech["pages"] if isinstance(mech["pages"], list) else [mech["pages"]]):
        notes.append("the pages of some processes' blocks could not be read (no /proc/self/pagemap "
                     "that tells the zero page from a written one): their samples are counted, "
                     "not measured")
    un = mech["unmeasured"]
    if sum(un.values()):
        parts = [f"{n:,} {why}" for why, n in (("with the pool of pages full", un["pool"]),
                                                ("aligned beyond a page", un["align"]),
                                                ("whose pages could not be read or made fresh",
                                                 un["other"])) if n]
        notes.append("sampled blocks not measured: " + ", ".join(parts) +
                     "; the figures come from the measured ones")
    if mech["rows_lost"]:
        notes.append(f"{mech['rows_lost']:,} samples are in no figure: the recorder's table of "
                     f"call paths was full")
    if mech["live_unread"]:
        notes.append(f"{mech['live_unread']:,} measured blocks alive at the snapshot are left "
                     f"out: a signal's snapshot could not read their pages")
    if any(p.access.forked_flags for p in profiles):
        notes.append("blocks alive at a fork: read-only pages not told from written ones (page "
                     "flags, Linux < 6.7), so read-before-written may miss them")
    huge = sum(r["sampled"]["huge"] for r in rows)
    if huge:
        notes.append(f"{huge:,} sampled blocks lay on huge pages: their pages count as touched "
                     f"2 MiB at a time")
    if any(p.snapshot_reason != "exit" for p in profiles):
        notes.append("figures as of each process's last snapshot, not all at exit: blocks "
                     "alive then were read then")
    return notes + list(sym.notes)


def _by_region(rows: Sequence[dict]) -> List[dict]:
    groups: Dict[str, List[dict]] = {}
    for r in rows:
        groups.setdefault(r["region"], []).append(r)
    out = [dict(region=reg, **_sum(members)) for reg, members in groups.items()]
    out.sort(key=lambda r: (-(r["untouched_bytes"] or 0), r["region"]))
    return out


def job_section(job, size: Optional[str] = None, region: Optional[str] = None,
                top: int = 20) -> dict:
    """The job file's figures (record --access in an MPI job): per (region, size) over every
    rank, pooled as merged processes are (T, K and K_m summed over the ranks; no pooled
    estimate when the ranks sampled with different means), and each rank's own estimates."""
    a = job.access
    sizes = SizeSet(size)
    rows = []
    notes = []
    if a.sample_mean:
        for (reg, sz), r in a.sizes.items():
            if sz not in sizes or not region_matches(reg, region):
                continue
            e = _Entry(reg, sz, ())
            e.add(r)
            rows.append(_figures(e, job.size_counts.get((reg, sz), 0), [r.samples, r.measured],
                                 True))
        rows.sort(key=lambda r: (-(r["untouched_bytes"] or 0), -(r["bytes"] or 0), r["size"],
                                 r["region"]))
        for rank, r in enumerate(rows, 1):
            r.update(rank=rank, frames=[], frames_total=0)
    else:
        notes.append("the ranks sampled with different means: no figure per size over the job, "
                     "only each rank's own")
    if a.unmeasured:
        notes.append(f"{a.unmeasured:,} sampled blocks were not measured (see the rank files' "
                     f"notes); the figures come from the measured ones")
    return dict(file=job.path, ranks=job.size, ranks_measured=a.ranks_measured,
                pages=a.mechanism, sample_mean=a.sample_mean, poll_ns=a.poll_ns, notes=notes,
                totals=_sum(rows) if rows else None, regions=_by_region(rows),
                entries=rows[:top] if top else rows, entries_total=len(rows),
                per_rank=sorted(a.ranks, key=lambda r: r["rank"]))


def build(profiles: Sequence[Profile], size: Optional[str] = None, region: Optional[str] = None,
          by: str = "type", top: int = 20, depth: int = 0,
          symbolizer: Optional[Symbolizer] = None, job=None) -> dict:
    """The access document of the profiles recorded with --access among `profiles`, and of
    the job file `job` when it holds --access figures (then the profiles may have none)."""
    job_doc = job_section(job, size, region, top) if job is not None and job.access else None
    if job_doc is not None and not any(p.access is not None for p in profiles):
        return dict(format=ACCESS_FORMAT, version=VERSION, processes=[], merged=False,
                    filters=dict(size=size or "all", region=region, by=by, top=top, depth=depth),
                    mechanism=None, sampling=None, notes=[], totals=None, regions=[],
                    per_rank=[], entries=[], entries_total=0, job=job_doc)
    profiles = require_access(profiles)
    sizes = SizeSet(size)
    check_region({r.path for p in profiles for r in p.regions.values()}
                 | {r.region for p in profiles for r in p.access.rows}, region)
    sym = symbolizer or Symbolizer()
    mech = _mechanism(profiles)
    rows = _measure(profiles, sizes, region, by, sym)
    for rank, r in enumerate(rows, 1):
        frames = r.pop("_frames")
        r["rank"] = rank
        r["frames"] = [f.to_json() for f in (frames[:depth] if depth else frames)]
    ranks = sorted({p.rank for p in profiles if p.rank >= 0})
    per_rank = []
    if len(profiles) > 1 and ranks:
        for p in profiles:
            mine = _measure([p], sizes, region, "size", sym)
            per_rank.append(dict(rank=p.rank, pid=p.pid, host=p.host, **_sum(mine)))
        per_rank.sort(key=lambda r: (r["rank"], r["pid"]))
    return dict(format=ACCESS_FORMAT, version=VERSION,
                processes=[describe(p) for p in profiles], merged=len(profiles) > 1,
                filters=dict(size=size or "all", region=region, by=by, top=top, depth=depth),
                mechanism=mech, sampling=sampling.describe(profiles),
                notes=_notes(profiles, mech, rows, sym),
                totals=_sum(rows), regions=_by_region(rows), per_rank=per_rank,
                entries=rows[:top] if top else rows, entries_total=len(rows), job=job_doc)
