"""Hot sizes from recorded profiles: the exact sizes that take the largest shares of a
program's allocations, chosen as hsmalloc's HSMALLOC_HOT_SIZES takes them (shared by
`heapscope run --hot-sizes` and a report's hint).

hsmalloc serves a named size with an exact class for sizes 9 to 262144 (a size of 8
bytes or less already has an 8-byte class), at most 8 of them: the size rounded up to
16, as malloc's alignment is by default (with HSMALLOC_PACKED=1 malloc takes the packed
8-byte classes up to 128, and a named size rounds to 8 there: class_of's `packed`). Sizes that round to the same class are counted together; a class is chosen when
its sizes take at least `min_share` of all recorded allocations, hottest first.
"""
from dataclasses import dataclass
from typing import Dict, List, Sequence

from heapscope.profile.model import Profile

MAX_SIZES = 8           # hsmalloc installs at most this many named sizes per thread
MIN_SIZE, MAX_SIZE = 9, 262144
DEFAULT_MIN_SHARE = 0.05


@dataclass(frozen=True)
class HotSize:
    size: int           # the class: the sizes rounded up as class_of does
    count: int          # allocations of sizes in the class
    share: float        # count / all allocations
    sizes: tuple        # the exact sizes seen, hottest first


def class_of(size: int, packed: bool = False) -> int:
    """The hot class hsmalloc gives a named `size` (packed: HSMALLOC_PACKED=1 or all)."""
    if packed and size <= 128:
        return max(16, (size + 7) // 8 * 8)
    return (size + 15) // 16 * 16


def size_counts(profiles: Sequence[Profile]) -> Dict[int, int]:
    """Allocations per exact size, over every profile and region."""
    counts: Dict[int, int] = {}
    for p in profiles:
        for (_region, size), n in p.size_counts.items():
            counts[size] = counts.get(size, 0) + n
    return counts


def hot_sizes(profiles: Sequence[Profile], min_share: float = DEFAULT_MIN_SHARE,
              limit: int = MAX_SIZES) -> List[HotSize]:
    """The classes worth an exact class, hottest first (empty when none qualifies)."""
    counts = size_counts(profiles)
    total = sum(counts.values())
    if total == 0:
        return []
    by_class: Dict[int, Dict[int, int]] = {}
    for size, n in counts.items():
        if MIN_SIZE <= size <= MAX_SIZE:
            by_class.setdefault(class_of(size), {})[size] = n
    chosen = []
    for cls, sizes in by_class.items():
        n = sum(sizes.values())
        if n / total >= min_share:
            exact = tuple(s for s, _ in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])))
            chosen.append(HotSize(cls, n, n / total, exact))
    chosen.sort(key=lambda h: (-h.count, h.size))
    return chosen[:limit]


def variable_value(hot: Sequence[HotSize]) -> str:
    """HSMALLOC_HOT_SIZES for these classes, e.g. "528,1040,2064"."""
    return ",".join(str(h.size) for h in hot)


def hot_sizes_document(profiles: Sequence[Profile],
                       min_share: float = DEFAULT_MIN_SHARE) -> dict:
    """Plain data for a report: the chosen classes and the variable that names them."""
    counts = size_counts(profiles)
    hot = hot_sizes(profiles, min_share)
    return {
        "total_allocations": sum(counts.values()),
        "min_share": min_share,
        "hot_sizes": [dict(size=h.size, count=h.count, share=h.share, sizes=list(h.sizes))
                      for h in hot],
        "variable": {"HSMALLOC_HOT_SIZES": variable_value(hot)} if hot else {},
    }
