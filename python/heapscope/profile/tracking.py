"""Decode the tracking chunks of a snapshot (record --track) into Profile.tracking;
without them, replay the event trace (record --trace, trace.py).

Layouts: src/format/profile_format.h, TRACK_SUMMARY (10) and TRACK_TYPES (11).
Rows with the same (region, size, frames) — one stack trace type seen by several
threads — are added up; a row with no frames aggregates one (region, size).
"""
import struct
from typing import Dict, List, Optional, Tuple

from heapscope.errors import HeapscopeError
from heapscope.profile.decode import Cursor, Malformed
from heapscope.profile.model import LIFETIME_BINS, Lifetimes, Tracking, TrackedStack

# enum hs_track_chunk_type (profile_format.h)
TRACK_SUMMARY = 10
TRACK_TYPES = 11
TRACE_START = 12
TRACE_EVENTS = 13

_SUMMARY = struct.Struct("<IIQQQQQQQ")
_ROW_HEAD = struct.Struct("<IIQQQQQQQQQ")
_U64 = struct.Struct("<Q")


def summary(payload) -> dict:
    (between, _reserved, max_ns, peak, peak_ns, end, untracked, table_bytes,
     max_blocks) = Cursor(payload).take(_SUMMARY)
    return dict(temporary_max_between=between, temporary_max_ns=max_ns, peak_bytes=peak,
                peak_mono_ns=peak_ns, end_bytes=end, untracked=untracked,
                table_bytes=table_bytes, max_blocks=max_blocks)


def _bins(c: Cursor, mask: int) -> Tuple[int, ...]:
    if mask >> LIFETIME_BINS:
        raise Malformed(f"histogram mask {mask:#x} names bins beyond {LIFETIME_BINS - 1}")
    n = bin(mask).count("1")
    values = struct.unpack_from(f"<{n}Q", c.rows(_U64, n)) if n else ()
    hist = [0] * LIFETIME_BINS
    it = iter(values)
    for b in range(LIFETIME_BINS):
        if mask >> b & 1:
            hist[b] = next(it)
    return tuple(hist)


def type_rows(payload) -> List[tuple]:
    """[(region_id, size, frames, counts)] with counts = [allocs, frees, temporaries,
    live_at_peak, live_at_end, extra_bytes, time_hist, between_hist]."""
    c = Cursor(payload)
    out = []
    for _ in range(c.u32()):
        (region, depth, size, allocs, frees, temps, at_peak, at_end, extra, time_mask,
         between_mask) = c.take(_ROW_HEAD)
        time_hist = _bins(c, time_mask)
        between_hist = _bins(c, between_mask)
        frames = struct.unpack_from(f"<{depth}Q", c.rows(_U64, depth)) if depth else ()
        if frees > allocs or at_end > allocs:
            raise Malformed(f"row of size {size}: {frees} frees / {at_end} live of {allocs} allocations")
        out.append((region, size, tuple(frames),
                    [allocs, frees, temps, at_peak, at_end, extra, time_hist, between_hist]))
    return out


def _add(acc: list, counts: list) -> None:
    for i in range(6):
        acc[i] += counts[i]
    for i in (6, 7):
        acc[i] = tuple(a + b for a, b in zip(acc[i], counts[i]))


def build(summary_fields: dict, rows: List[tuple], region_path) -> Tracking:
    """A Tracking from the decoded summary and rows; region_path(id) names a region."""
    merged: Dict[tuple, list] = {}
    extra: Dict[int, List[int]] = {}
    for region, size, frames, counts in rows:
        key = (region_path(region), size, frames)
        if key in merged:
            _add(merged[key], counts)
        else:
            merged[key] = list(counts)
        e = extra.setdefault(size, [0, 0])
        e[0] += counts[0]
        e[1] += counts[5]
    stacks = [TrackedStack(region, size, frames, Lifetimes(
        allocs=c[0], frees=c[1], temporaries=c[2], time_hist=c[6], between_hist=c[7],
        live_at_peak=c[3], live_at_peak_bytes=c[3] * size, live_at_end=c[4],
        live_at_end_bytes=c[4] * size)) for (region, size, frames), c in merged.items()]
    stacks.sort(key=lambda s: (-s.life.allocs, s.region, s.size, s.frames))
    fields = {k: v for k, v in summary_fields.items() if k != "max_blocks"}
    return Tracking(stacks=stacks, extra={s: (b, x) for s, (b, x) in sorted(extra.items())},
                    source="track", **fields)


def from_profile(profile) -> Optional[Tracking]:
    """Profile.tracking from the chosen snapshot's TRACK_* chunks (kept raw by the
    reader in profile.extra_chunks); None when the run was not tracked."""
    summaries = profile.extra_chunks.get(TRACK_SUMMARY)
    if not summaries:
        if TRACE_START in profile.file_chunks:
            from heapscope.profile import trace   # record --trace without --track
            return trace.replay(profile)
        return None

    def decode(decoder, payload, name):
        try:
            return decoder(memoryview(payload))
        except Malformed as exc:
            raise HeapscopeError(f"{profile.path}: malformed {name} chunk in snapshot "
                                 f"{profile.snapshot_seq}: {exc}") from None

    def region_path(rid: int) -> str:
        region = profile.regions.get(rid)
        return region.path if region else f"(region {rid})"

    fields = decode(summary, summaries[-1], "TRACK_SUMMARY")
    rows: List[tuple] = []
    for payload in profile.extra_chunks.get(TRACK_TYPES, []):
        rows.extend(decode(type_rows, payload, "TRACK_TYPES"))
    return build(fields, rows, region_path)
