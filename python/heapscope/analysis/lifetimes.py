"""The `heapscope lifetimes` and `heapscope temporaries` documents, as plain data.

lifetimes: per size (all its stack trace types and regions together) and per stack
trace type: blocks allocated and freed, still live at the snapshot, temporaries, and
the lifetime distributions in time (ns) and in allocations made in between, each as
non-empty log-scale bins with the bins holding the median and the 90th percentile
(analysis.histogram). Per size also the extra heap bytes (usable size minus requested
size, Tracking.extra): what the allocator spent beyond what was asked.

temporaries: the sizes and the stack trace types ranked by temporaries (blocks freed
with at most N other allocations of the same thread in between, and within the time
bound if one was set), with the share of their allocations that were temporaries.
"""
from typing import Dict, List, Sequence

from heapscope.analysis import histogram
from heapscope.analysis.tracked import (NO_HIST, TrackedEntry, add_lifetimes, frames_json,
                                        sum_lifetimes, tracking_settings)
from heapscope.profile.model import Lifetimes, Profile

LIFETIMES_FORMAT, TEMPORARIES_FORMAT, VERSION = "heapscope-lifetimes", "heapscope-temporaries", 1
EMPTY = Lifetimes(0, 0, 0, NO_HIST, NO_HIST, 0, 0, 0, 0)


def _figures(life: Lifetimes) -> dict:
    return dict(allocs=life.allocs, frees=life.frees, live_at_end=life.live_at_end,
                temporaries=life.temporaries,
                time=histogram.summary_json(life.time_hist),
                between=histogram.summary_json(life.between_hist))


def _type_json(rank: int, e: TrackedEntry, depth: int) -> dict:
    return dict(rank=rank, region=e.region, size=e.size, recorded=bool(e.frames), no_stack=e.no_stack,
                estimated=e.estimated, frames_total=len(e.frames), frames=frames_json(e.frames, depth))


def extra_per_size(profiles: Sequence[Profile]) -> Dict[int, tuple]:
    """size -> (blocks, extra bytes) summed over the profiles."""
    out: Dict[int, list] = {}
    for p in profiles:
        for size, (blocks, extra) in p.tracking.extra.items():
            acc = out.setdefault(size, [0, 0])
            acc[0] += blocks
            acc[1] += extra
    return {s: tuple(v) for s, v in out.items()}


def build_lifetimes(profiles: Sequence[Profile], entries: List[TrackedEntry], top: int = 10,
                    depth: int = 0) -> dict:
    by_size: Dict[int, List[TrackedEntry]] = {}
    for e in entries:
        by_size.setdefault(e.size, []).append(e)
    extra = extra_per_size(profiles)
    sizes = []
    total = EMPTY
    for size in sorted(by_size):
        members = sorted(by_size[size], key=lambda e: (-e.life.allocs, e.region, e.key))
        life = sum_lifetimes([EMPTY] + [e.life for e in members])
        total = add_lifetimes(total, life)
        blocks, extra_bytes = extra.get(size, (0, 0))
        # a size's blocks no sample saw but at the peak hold no lifetime (sampled stacks)
        members = [e for e in members if e.life.allocs or e.frames]
        shown = members[:top] if top else members
        sizes.append(dict(
            size=size, regions=sorted({e.region for e in members}), types=len(members),
            **_figures(life),
            extra=dict(blocks=blocks, bytes=extra_bytes,
                       per_block=extra_bytes / blocks if blocks else None) if blocks else None,
            stack_types=[dict(_type_json(i, e, depth), **_figures(e.life))
                         for i, e in enumerate(shown, 1)]))
    return dict(format=LIFETIMES_FORMAT, version=VERSION,
                totals=dict(allocs=total.allocs, frees=total.frees, live_at_end=total.live_at_end,
                            temporaries=total.temporaries),
                sizes=sizes)


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def build_temporaries(profiles: Sequence[Profile], entries: List[TrackedEntry], top: int = 10,
                      depth: int = 0) -> dict:
    settings = tracking_settings(profiles)
    sizes: Dict[int, list] = {}
    for e in entries:
        acc = sizes.setdefault(e.size, [0, 0, 0])
        acc[0] += e.life.allocs
        acc[1] += e.life.temporaries
        acc[2] += 1
    allocs = sum(v[0] for v in sizes.values())
    temps = sum(v[1] for v in sizes.values())
    size_rows = sorted(((s, v) for s, v in sizes.items() if v[1]), key=lambda sv: (-sv[1][1], sv[0]))
    types = sorted((e for e in entries if e.life.temporaries),
                   key=lambda e: (-e.life.temporaries, e.size, e.region, e.key))
    shown = types[:top] if top else types
    return dict(
        format=TEMPORARIES_FORMAT, version=VERSION,
        bound=dict(max_between=settings["temporary_max_between"],
                   max_ns=settings["temporary_max_ns"] or None),
        totals=dict(allocs=allocs, temporaries=temps, share=_share(temps, allocs),
                    types_with_temporaries=len(types)),
        sizes=[dict(rank=i, size=s, allocs=v[0], temporaries=v[1], share=_share(v[1], v[0]),
                    share_of_temporaries=_share(v[1], temps), types=v[2])
               for i, (s, v) in enumerate(size_rows, 1)],
        stack_types=[dict(_type_json(i, e, depth), allocs=e.life.allocs,
                          temporaries=e.life.temporaries, share=_share(e.life.temporaries, e.life.allocs),
                          share_of_temporaries=_share(e.life.temporaries, temps))
                     for i, e in enumerate(shown, 1)])
