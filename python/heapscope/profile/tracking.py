"""Decode the tracking chunks of a snapshot (record --track) into Profile.tracking,
and build a Tracking from rows (also for the event trace's replay, trace.py).

Layouts: the format table, TRACK_SUMMARY, TRACK_UNTRACKED and TRACK_TYPES. Rows with the same (region,
size, frames) — one stack trace type seen by several threads — are added up; a row
with no frames aggregates one (region, size).
"""
from typing import Dict, List, Optional, Tuple

from heapscope.errors import HeapscopeError
from heapscope.profile import format as fmt
from heapscope.profile.layout import Malformed
from heapscope.profile.model import LIFETIME_BINS, Lifetimes, Tracking, TrackedStack


def summary(payload) -> dict:
    r = fmt.CODECS[fmt.TRACK_SUMMARY].decode(payload)
    return dict(temporary_max_between=r.temporary_max_between, temporary_max_ns=r.temporary_max_ns,
                peak_bytes=r.peak_bytes, peak_mono_ns=r.peak_mono_ns, end_bytes=r.end_bytes,
                untracked=r.untracked, table_bytes=r.table_bytes, max_blocks=r.max_blocks)


def _hist(mask: int, values: Tuple[int, ...]) -> Tuple[int, ...]:
    """The LIFETIME_BINS bins from the nonzero ones (one value per bit of mask)."""
    if mask >> LIFETIME_BINS:
        raise Malformed(f"histogram mask {mask:#x} names bins beyond {LIFETIME_BINS - 1}")
    hist = [0] * LIFETIME_BINS
    it = iter(values)
    for b in range(LIFETIME_BINS):
        if mask >> b & 1:
            hist[b] = next(it)
    return tuple(hist)


def type_rows(payload) -> List[tuple]:
    """[(region_id, size, frames, counts)] with counts = [allocs, frees, temporaries,
    live_at_peak, live_at_end, extra_bytes, time_hist, between_hist]."""
    out = []
    for r in fmt.CODECS[fmt.TRACK_TYPES].decode(payload).rows:
        time_hist = _hist(r.time_mask, r.time_bins)
        between_hist = _hist(r.between_mask, r.between_bins)
        if r.frees > r.allocs or r.live_at_end > r.allocs:
            raise Malformed(f"row of size {r.size}: {r.frees} frees / {r.live_at_end} live of "
                            f"{r.allocs} allocations")
        out.append((r.region, r.size, r.frames,
                    [r.allocs, r.frees, r.temporaries, r.live_at_peak, r.live_at_end,
                     r.extra_bytes, time_hist, between_hist]))
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
