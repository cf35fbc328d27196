"""The `heapscope peak` document: each process's heap peak and who held it.

The recorder notes the global heap peak of a process (requested bytes of all tracked
live blocks, at its highest) and, per stack trace type, the blocks and bytes live at
that moment. A peak belongs to one process, so several profiles give one peak each,
never a sum. Holders are ranked by bytes live at the peak; `share` is their part of
the peak. Blocks that were not tracked (table full) are in neither: the peak is then
a lower bound (`peak_lower_bound`), `unattributed_bytes` is unknown (None; at most
`untracked_bytes`). --size/--region narrow the holders listed, not the peak.
"""
from typing import Dict, List, Optional, Sequence

from heapscope.analysis.selection import SizeSet
from heapscope.analysis.tracked import TrackedEntry, frames_json, tracked_entries

PEAK_FORMAT, VERSION = "heapscope-peak", 1


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def build_peak(process: int, profile, entries: List[TrackedEntry], all_entries: List[TrackedEntry],
               top: int = 10, depth: int = 0) -> dict:
    """One process's peak. `entries`: the selected ones; `all_entries`: every tracked entry
    of the process (what the unattributed remainder is computed from)."""
    t = profile.tracking
    peak = t.peak_bytes
    attributed = sum(e.life.live_at_peak_bytes for e in all_entries)
    # Untracked blocks are in neither the peak nor its holders: how much of them was
    # live at the peak is unknown (at most their bytes), and the peak a lower bound.
    unattributed = None if t.untracked else max(0, peak - attributed)
    sizes: Dict[int, list] = {}
    for e in entries:
        if e.life.live_at_peak:
            acc = sizes.setdefault(e.size, [0, 0, 0])
            acc[0] += e.life.live_at_peak
            acc[1] += e.life.live_at_peak_bytes
            acc[2] += 1
    size_rows = sorted(sizes.items(), key=lambda sv: (-sv[1][1], sv[0]))
    holders = sorted((e for e in entries if e.life.live_at_peak),
                     key=lambda e: (-e.life.live_at_peak_bytes, e.size, e.region, e.key))
    shown = holders[:top] if top else holders
    held = sum(e.life.live_at_peak_bytes for e in entries)
    return dict(
        process=process, peak_bytes=peak, peak_mono_ns=t.peak_mono_ns, end_bytes=t.end_bytes,
        peak_lower_bound=t.peak_is_lower_bound, untracked_blocks=t.untracked,
        untracked_bytes=t.untracked_bytes,
        selected_bytes=held, selected_share=_share(held, peak),
        unattributed_bytes=unattributed,
        sizes=[dict(rank=i, size=s, blocks=v[0], bytes=v[1], share=_share(v[1], peak), types=v[2])
               for i, (s, v) in enumerate(size_rows, 1)],
        stack_types=[dict(rank=i, size=e.size, region=e.region, blocks=e.life.live_at_peak,
                          bytes=e.life.live_at_peak_bytes, share=_share(e.life.live_at_peak_bytes, peak),
                          recorded=bool(e.frames), no_stack=e.no_stack, estimated=e.estimated,
                          frames_total=len(e.frames),
                          frames=frames_json(e.frames, depth))
                     for i, e in enumerate(shown, 1)],
        holders=len(holders))


def document(peaks: Sequence[dict]) -> dict:
    return dict(format=PEAK_FORMAT, version=VERSION, peaks=list(peaks))


def build_peaks(profiles: Sequence, size: Optional[str], region: Optional[str], symbolizer,
                top: int = 10, depth: int = 0) -> dict:
    """The document: one peak per profile, its holders narrowed to the selection (a
    selection nothing holds in any profile is an error, as in the other reports)."""
    sizes = SizeSet(size)
    tracked_entries(profiles, sizes, region, symbolizer)   # an empty selection is an error
    peaks = []
    for i, p in enumerate(profiles):
        every = tracked_entries([p], SizeSet(None), None, symbolizer, required=False)
        chosen = tracked_entries([p], sizes, region, symbolizer, required=False)
        peaks.append(build_peak(i, p, chosen, every, top=top, depth=depth))
    return document(peaks)
