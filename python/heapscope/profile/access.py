"""Decode the ACCESS chunks of a snapshot (record --access) into Profile.access.

Layouts: the format table, ACCESS and ACCESS_TYPES. Rows with the same (region, size,
frames) — one call path seen by several threads — are added up. A row whose figures
cannot hold (more measured blocks than samples, more touched bytes than the measured
blocks have) is a malformed chunk.
"""
from typing import Dict, List, Optional, Tuple

from heapscope.profile import format as fmt
from heapscope.profile.layout import Malformed
from heapscope.profile.model import ACCESS_BINS, Access, AccessRow, JobAccess

NO_HIST = (0,) * ACCESS_BINS
from heapscope.profile.tracking import _hist, chunk_decoder, region_namer

MECHANISMS = fmt.TABLE.enums["access_mechanism"].labels()
_COUNTS = ("samples", "measured", "live", "touched_bytes", "never_touched", "read_first",
           "zeroed", "huge")


def _summary(payload) -> dict:
    r = fmt.CODECS[fmt.ACCESS].decode(payload)
    if not 0 <= r.mechanism < len(MECHANISMS):
        raise Malformed(f"unknown mechanism {r.mechanism}")
    return dict(mechanism=MECHANISMS[r.mechanism], page_size=r.page_size, poll_ns=r.poll_ns,
                sample_mean=r.sample_mean, large_bytes=r.large_bytes,
                unmeasured=dict(pool=r.unmeasured_pool, align=r.unmeasured_align,
                                other=r.unmeasured_other),
                pool_bytes=r.pool_bytes, pool_peak_bytes=r.pool_peak_bytes,
                rows_lost=r.rows_lost, live_unread=r.live_unread, forked_flags=bool(r.flags & 1))


def _rows(payload) -> List[tuple]:
    out = []
    for r in fmt.CODECS[fmt.ACCESS_TYPES].decode(payload).rows:
        if not (r.live <= r.measured <= r.samples and r.never_touched <= r.measured and
                r.read_first <= r.measured and r.zeroed <= r.measured and r.huge <= r.measured
                and r.touched_bytes <= r.measured * r.size):
            raise Malformed(f"row of size {r.size}: {r.measured} measured of {r.samples} samples, "
                            f"{r.live} live, {r.never_touched} never touched, "
                            f"{r.touched_bytes} bytes touched")
        after, by = _hist(r.after_mask, r.after_bins), _hist(r.by_mask, r.by_bins)
        touched = r.measured - r.never_touched
        if sum(after) != touched or sum(by) != touched:
            raise Malformed(f"row of size {r.size}: first-touch histograms of {sum(after)} and "
                            f"{sum(by)} blocks for {touched} touched")
        out.append((r.region, r.size, r.frames, [getattr(r, c) for c in _COUNTS], after, by))
    return out


def from_snapshot(profile) -> Optional[Access]:
    """Profile.access from the chosen snapshot's ACCESS chunks (kept raw by the reader in
    profile.extra_chunks); None when the snapshot has none."""
    summaries = profile.extra_chunks.get(fmt.ACCESS)
    if not summaries:
        return None
    decode = chunk_decoder(profile)

    access = Access(**decode(_summary, summaries[-1], "ACCESS"))
    region_path = region_namer(profile)
    merged: Dict[Tuple[str, int, tuple], list] = {}
    for payload in profile.extra_chunks.get(fmt.ACCESS_TYPES, []):
        for rid, size, frames, counts, after, by in decode(_rows, payload, "ACCESS_TYPES"):
            key = (region_path(rid), size, tuple(frames))
            acc = merged.get(key)
            if acc is None:
                merged[key] = [list(counts), list(after), list(by)]
            else:
                acc[0] = [a + b for a, b in zip(acc[0], counts)]
                acc[1] = [a + b for a, b in zip(acc[1], after)]
                acc[2] = [a + b for a, b in zip(acc[2], by)]
    access.rows = [AccessRow(region, size, frames, *counts, tuple(after), tuple(by))
                   for (region, size, frames), (counts, after, by) in merged.items()]
    access.rows.sort(key=lambda r: (r.region, r.size, r.frames))
    return access


# ---- the job file's share (JOB_ACCESS, JOB_ACCESS_SIZES, JOB_ACCESS_RANKS) ----

def job_summary(payload) -> JobAccess:
    r = fmt.CODECS[fmt.JOB_ACCESS].decode(payload)
    if not 0 <= r.mechanism < len(MECHANISMS):
        raise Malformed(f"unknown mechanism {r.mechanism}")
    return JobAccess(ranks_measured=r.ranks, mechanism=MECHANISMS[r.mechanism],
                     sample_mean=r.sample_mean, poll_ns=r.poll_ns, unmeasured=r.unmeasured)


def job_sizes(access: JobAccess, payload) -> None:
    """JOB_ACCESS_SIZES rows into access.sizes: (region, size) -> AccessRow without frames
    (no first-touch histograms in the job file)."""
    for r in fmt.CODECS[fmt.JOB_ACCESS_SIZES].decode(payload).rows:
        if not (r.live <= r.measured <= r.samples and r.never_touched <= r.measured and
                r.touched_bytes <= r.measured * r.size):
            raise Malformed(f"JOB_ACCESS_SIZES row of size {r.size}: {r.measured} measured of "
                            f"{r.samples} samples, {r.touched_bytes} bytes touched")
        counts = [getattr(r, c) for c in _COUNTS]
        old = access.sizes.get((r.region, r.size))
        if old is not None:
            counts = [getattr(old, c) + v for c, v in zip(_COUNTS, counts)]
        access.sizes[(r.region, r.size)] = AccessRow(r.region, r.size, (), *counts,
                                                     NO_HIST, NO_HIST)


def job_ranks(access: JobAccess, payload) -> None:
    for row in fmt.CODECS[fmt.JOB_ACCESS_RANKS].decode(payload).ranks:
        rank, _, samples, measured, blocks, nbytes, touched, untouched, never, first = row
        access.ranks.append(dict(rank=rank, samples=samples, measured=measured, blocks=blocks,
                                 bytes=nbytes, touched_bytes=touched, untouched_bytes=untouched,
                                 never_touched_blocks=never, read_before_written_blocks=first))
