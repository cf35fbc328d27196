"""Decode the tracking chunks of a snapshot (record --track) into Profile.tracking,
and build a Tracking from rows (also for the event trace's replay, trace.py).

Layouts: the format table, TRACK_SUMMARY, TRACK_UNTRACKED and TRACK_TYPES. Rows with the same (region,
size, frames) — one stack trace type seen by several threads — are added up; a row
with no frames aggregates one (region, size).
"""
from typing import Dict, List, Optional, Tuple

from heapscope.errors import HeapscopeError
from heapscope.profile import format as fmt, ordering, word_rows
from heapscope.profile.layout import Malformed
from heapscope.profile.model import EMPTY_HIST, LIFETIME_BINS, Lifetimes, Tracking, TrackedStack, maker

_lifetimes, _tracked = maker(Lifetimes), maker(TrackedStack)


def summary(payload) -> dict:
    r = fmt.CODECS[fmt.TRACK_SUMMARY].decode(payload)
    return dict(temporary_max_between=r.temporary_max_between, temporary_max_ns=r.temporary_max_ns,
                peak_bytes=r.peak_bytes, peak_mono_ns=r.peak_mono_ns, end_bytes=r.end_bytes,
                untracked=r.untracked, table_bytes=r.table_bytes, max_blocks=r.max_blocks)


def _hist(mask: int, values: Tuple[int, ...]) -> Tuple[int, ...]:
    """The LIFETIME_BINS bins from the nonzero ones (one value per bit of mask)."""
    if mask >> LIFETIME_BINS:
        raise Malformed(f"histogram mask {mask:#x} names bins beyond {LIFETIME_BINS - 1}")
    if not mask:
        return EMPTY_HIST
    hist = [0] * LIFETIME_BINS
    it = iter(values)
    for b in range(LIFETIME_BINS):
        if mask >> b & 1:
            hist[b] = next(it)
    return tuple(hist)


def type_rows(payload) -> List[tuple]:
    """[(region_id, size, frames, counts)] with counts = [allocs, frees, temporaries,
    live_at_peak, live_at_end, extra_bytes, time_hist, between_hist]."""
    rows = word_rows.track_rows(payload)
    if rows is None:   # not cut cleanly: the codec reads it, or says what is wrong
        rows = [(r.region, r.size, r.frames, r.allocs, r.frees, r.temporaries, r.live_at_peak,
                 r.live_at_end, r.extra_bytes, _hist(r.time_mask, r.time_bins),
                 _hist(r.between_mask, r.between_bins))
                for r in fmt.CODECS[fmt.TRACK_TYPES].decode(payload).rows]
    out = []
    for region, size, frames, allocs, frees, temporaries, peak, end, extra, times, betweens in rows:
        if frees > allocs or end > allocs:
            raise Malformed(f"row of size {size}: {frees} frees / {end} live of {allocs} allocations")
        out.append((region, size, frames, [allocs, frees, temporaries, peak, end, extra, times, betweens]))
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
    paths: Dict[int, str] = {}
    for region, size, frames, counts in rows:
        path = paths.get(region)
        if path is None:
            path = paths[region] = region_path(region)
        key = (path, size, frames)
        acc = merged.get(key)
        if acc is None:
            merged[key] = list(counts)
        else:
            _add(acc, counts)
        e = extra.get(size)
        if e is None:
            extra[size] = [counts[0], counts[5]]
        else:
            e[0] += counts[0]
            e[1] += counts[5]
    stacks = [_tracked(region, size, frames, _lifetimes(
        c[0], c[1], c[2], c[6], c[7], c[3], c[3] * size, c[4], c[4] * size), None)
        for (region, size, frames), c in merged.items()]
    stacks = [stacks[i] for i in ordering.most_first(
        [(s.life.allocs, s.region, s.size, s.frames) for s in stacks])]
    fields = {k: v for k, v in summary_fields.items() if k != "max_blocks"}
    return Tracking(stacks=stacks, extra={s: (b, x) for s, (b, x) in sorted(extra.items())},
                    source="track", **fields)


def region_namer(profile):
    """region id -> path, for the rows of a profile (an unknown id is named, not fatal)."""
    def region_path(rid: int) -> str:
        region = profile.regions.get(rid)
        return region.path if region else f"(region {rid})"
    return region_path


def chunk_decoder(profile):
    """decode(decoder, payload, name) for a chunk of the profile's chosen snapshot kept
    raw (profile.extra_chunks): a malformed one becomes a one-line error naming it."""
    def decode(decoder, payload, name):
        try:
            return decoder(memoryview(payload))
        except Malformed as exc:
            raise HeapscopeError(f"{profile.path}: malformed {name} chunk in snapshot "
                                 f"{profile.snapshot_seq}: {exc}") from None
    return decode


def from_snapshot(profile) -> Optional[Tracking]:
    """Profile.tracking from the chosen snapshot's TRACK_* chunks (kept raw by the
    reader in profile.extra_chunks); None when the snapshot has none."""
    summaries = profile.extra_chunks.get(fmt.TRACK_SUMMARY)
    if not summaries:
        return None
    decode = chunk_decoder(profile)

    fields = decode(summary, summaries[-1], "TRACK_SUMMARY")
    left_out = profile.extra_chunks.get(fmt.TRACK_UNTRACKED)
    if left_out:
        blocks, nbytes = decode(lambda p: tuple(fmt.CODECS[fmt.TRACK_UNTRACKED].decode(p)),
                                left_out[-1], "TRACK_UNTRACKED")
        fields.update(untracked=blocks, untracked_bytes=nbytes)
    else:   # a recorder before TRACK_UNTRACKED: the bytes are unknown unless none was left out
        fields["untracked_bytes"] = 0 if not fields["untracked"] else None
    rows: List[tuple] = []
    for payload in profile.extra_chunks.get(fmt.TRACK_TYPES, []):
        rows.extend(decode(type_rows, payload, "TRACK_TYPES"))
    return build(fields, rows, region_namer(profile))
