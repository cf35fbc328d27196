"""Stacks recorded by sampling (record --sample-bytes N): sample counts -> estimates.

The recorder picks each allocation of s > 0 bytes with probability
p(s) = 1 - exp(-s/N), independently (profile_format.h, SAMPLING). A stack type of
size s seen k times therefore stands for k / p(s) allocations in expectation (the
Horvitz-Thompson estimate). The counts per size and region are exact, so among the
types of one size and region, which share p, the reader splits that exact total in
proportion to their samples: the same estimate up to the noise of the total, minus
that noise (a size with one path gets its exact count). Each type's count and bytes
become the estimate and k stays in StackType.samples, so every analysis reads
allocations whatever the mode; analysis/sampling.py gives the intervals.

Tracking (record --track, sampled by default): a sampled block is tracked under its
stack trace type, every other one under its (region, size). Each figure (allocations,
frees, temporaries, each lifetime bin, blocks live at the peak and at the end) is
exact per (region, size) — the types' rows plus the size's row — and each type's
share of it is estimated as for the counts: the sampled blocks with that figure are a
uniform choice among the cell's, so the cell's figure is split in proportion to them
(estimated_tracking). A figure no sampled block of the cell has stays on the size's
row, without a stack.
"""
import math
from dataclasses import replace
from typing import Dict, List, Sequence, Tuple

from heapscope.profile.model import Lifetimes, StackType, TrackedStack, Tracking


def probability(size: int, mean_bytes: int) -> float:
    """The chance that one allocation of `size` bytes was sampled."""
    if size <= 0 or mean_bytes <= 0:
        return 0.0
    return -math.expm1(-size / mean_bytes)


def estimated(types: List[StackType], mean_bytes: int,
              size_counts: Dict[Tuple[str, int], int]) -> List[StackType]:
    """The types (count = samples) with their counts and bytes estimated; size_counts:
    the exact allocations per (region, size)."""
    samples: Dict[Tuple[str, int], int] = {}
    for t in types:
        samples[(t.region, t.size)] = samples.get((t.region, t.size), 0) + t.count
    out = []
    for t in types:
        total = size_counts.get((t.region, t.size))
        if total:
            count = round(total * t.count / samples[(t.region, t.size)])
        else:
            p = probability(t.size, mean_bytes)
            count = round(t.count / p) if p > 0 else 0
        out.append(replace(t, count=count, bytes=count * t.size, samples=t.count))
    out.sort(key=lambda s: (-s.count, s.region, s.size, s.frames))
    return out


def split(total: int, weights: Sequence[int]) -> List[int]:
    """total shared in proportion to weights, in whole numbers that add up to it
    (largest remainders first); all 0 when the weights are."""
    whole = sum(weights)
    if not whole:
        return [0] * len(weights)
    exact = [total * w / whole for w in weights]
    out = [math.floor(x) for x in exact]
    left = total - sum(out)
    for i in sorted(range(len(exact)), key=lambda i: out[i] - exact[i])[:left]:
        out[i] += 1
    return out


def _classes(life: Lifetimes) -> Tuple[int, int, int]:
    """A row's blocks in three disjoint classes: temporaries, other freed, not freed."""
    return life.temporaries, life.frees - life.temporaries, life.allocs - life.frees


def _split_figure(rows, typed, figure, down: bool = False) -> List[int]:
    """One figure of a cell split among its typed rows; the last entry what is left.
    down: each share rounded down, what that leaves on the size's row (as the recorder
    splits the blocks at the peak for the job file: output/job_peak_stacks.c)."""
    total = sum(figure(r) for r in rows)
    weights = [figure(r) for r in typed]
    whole = sum(weights)
    if down:
        shares = [total * w // whole if whole else 0 for w in weights]
    else:
        shares = split(total, weights)
    return shares + [total - sum(shares)]


def _hist(life: Lifetimes, name: str) -> Tuple[int, ...]:
    return tuple(getattr(life, name))


def _hists(rows, typed, frees: List[int], name: str) -> List[Tuple[int, ...]]:
    """A lifetime histogram per typed row, and for what is left: each type's estimated
    frees spread over its sampled blocks' bins, what is left over the cell's bins."""
    bins = max(len(_hist(r.life, name)) for r in rows)
    cell = [sum(_hist(r.life, name)[b] for r in rows if b < len(_hist(r.life, name)))
            for b in range(bins)]
    out = []
    for i, r in enumerate(typed + [None]):
        weights = list(_hist(r.life, name)) + [0] * (bins - len(_hist(r.life, name))) \
            if r is not None else cell
        out.append(tuple(split(frees[i], weights)))
    return out


def estimated_tracking(tracking: Tracking) -> Tracking:
    """Tracking whose type rows hold the sampled blocks: every figure of a (region, size)
    split among its types by their sampled blocks (the rows' raw figures kept in
    TrackedStack.sampled), what no sample saw left on the size's row (frames ()). The
    blocks are split in three disjoint classes, temporaries, other freed and not freed,
    so that a type's temporaries never exceed its frees nor its frees its allocations;
    blocks live at the peak and at the end are split on their own, at most the type's
    blocks (not freed, for the end: the rest stays on the size's row). Every figure of
    a (region, size) adds up to the recorded one."""
    cells: Dict[Tuple[str, int], List[TrackedStack]] = {}
    for s in tracking.stacks:
        cells.setdefault((s.region, s.size), []).append(s)
    out: List[TrackedStack] = []
    for (region, size), rows in cells.items():
        typed = [r for r in rows if r.frames]
        if not typed:
            out.extend(rows)
            continue
        temps, freed, kept = (_split_figure(rows, typed, lambda r, c=c: _classes(r.life)[c])
                              for c in range(3))
        peak = _split_figure(rows, typed, lambda r: r.life.live_at_peak, down=True)
        end = _split_figure(rows, typed, lambda r: r.life.live_at_end)
        frees = [t + f for t, f in zip(temps, freed)]
        hists = {name: _hists(rows, typed, frees, name) for name in ("time_hist", "between_hist")}
        spill_peak = spill_end = 0      # what a path cannot hold goes to its size's row
        for i, r in enumerate(typed + [None]):
            allocs, frees = temps[i] + freed[i] + kept[i], temps[i] + freed[i]
            if r is not None:
                at_peak, at_end = min(peak[i], allocs), min(end[i], allocs - frees)
                spill_peak += peak[i] - at_peak
                spill_end += end[i] - at_end
            else:
                at_peak, at_end = peak[i] + spill_peak, end[i] + spill_end
            life = Lifetimes(allocs=allocs, frees=frees, temporaries=temps[i],
                             time_hist=hists["time_hist"][i], between_hist=hists["between_hist"][i],
                             live_at_peak=at_peak, live_at_peak_bytes=at_peak * size,
                             live_at_end=at_end, live_at_end_bytes=at_end * size)
            if r is not None:
                out.append(TrackedStack(region, size, r.frames, life, sampled=r.life))
            elif allocs or at_peak or at_end:
                out.append(TrackedStack(region, size, (), life))
    return replace(tracking, stacks=out)
