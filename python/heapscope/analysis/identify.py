"""The `heapscope report` document (step one of the method, identify), as plain data.

Built from profiles, rendered by render.report_text (text), render.csv_tables (CSV) or JSON;
its JSON form is documented in docs/report-formats.md. Several profiles are merged
by region path (counts added), or kept apart with per_process.

Filters: `region` limits every section to the matching regions; `sizes`, `min_count`
and `top` limit the size table only (groups, hot sizes and API calls describe all
sizes of the kept regions, and shares are taken of all of a region's allocations).
"""
from typing import Dict, List, Optional, Sequence, Tuple

from heapscope.analysis.processes import describe
from heapscope.analysis.selection import SizeSet, check_region, region_matches
from heapscope.profile import format as fmt
from heapscope.profile.model import Profile

SMALL_MAX = 256 * 1024     # small: size <= 256 KiB
MID_MAX = 1024 * 1024      # mid: 256 KiB < size <= 1 MiB; large above
GROUPS = ("small", "mid", "large")
REPORT_FORMAT = "heapscope-report"
REPORT_VERSION = 1


def group_of(size: int) -> str:
    return "small" if size <= SMALL_MAX else "mid" if size <= MID_MAX else "large"


def build(profiles: Sequence[Profile], region: Optional[str] = None, sizes: SizeSet = None,
          min_count: int = 0, top: int = 0, hot: int = 10, per_process: bool = False,
          left_out: Sequence[Tuple[str, str]] = ()) -> dict:
    """left_out: (path, why) of the files that could not be read (profile.load_profiles):
    listed in the document, in no figure."""
    sizes = sizes or SizeSet(None)
    check_region((r.path for p in profiles for r in p.regions.values()), region)
    doc = dict(format=REPORT_FORMAT, version=REPORT_VERSION,
               processes=[describe(p) for p in profiles],
               left_out=[dict(file=path, why=why) for path, why in left_out],
               merged=len(profiles) > 1 and not per_process,
               filters=dict(region=region, size=sizes.spec or None, min_count=min_count,
                            top=top, hot=hot))
    options = dict(region=region, sizes=sizes, min_count=min_count, top=top, hot=hot)
    doc.update(section(profiles, **options))
    if per_process:
        doc["per_process"] = [dict(process=i, **section([p], **options))
                              for i, p in enumerate(profiles)]
    return doc


def section(profiles: Sequence[Profile], region, sizes, min_count, top, hot) -> dict:
    """The tables of one set of profiles (merged), for the kept regions."""
    regions = _region_order(profiles, region)
    counts: Dict[Tuple[str, int], int] = {}
    api: Dict[str, Dict[str, int]] = {r: {} for r in regions}
    for p in profiles:
        for key, n in p.size_counts.items():
            if key[0] in api:
                counts[key] = counts.get(key, 0) + n
        for (r, name), n in p.api_counts.items():
            if r in api:
                api[r][name] = api[r].get(name, 0) + n
    failed = _failed(profiles, api)
    used = [r for r in regions if any(api[r].values()) or r in failed
            or any(k[0] == r and n for k, n in counts.items())]
    api = {r: {name: api[r][name] for name in _api_order(api[r]) if api[r][name]} for r in used}

    by_size: Dict[int, Dict[str, int]] = {}
    for (r, size), n in counts.items():
        if n:
            by_size.setdefault(size, {})[r] = n
    totals = {r: dict(count=0, bytes=0) for r in used}
    groups = {r: {g: dict(count=0, bytes=0) for g in GROUPS} for r in used}
    per_region: Dict[str, List[Tuple[int, int]]] = {r: [] for r in used}
    for size, row in by_size.items():
        for r, n in row.items():
            totals[r]["count"] += n
            totals[r]["bytes"] += n * size
            g = groups[r][group_of(size)]
            g["count"] += n
            g["bytes"] += n * size
            per_region[r].append((size, n))

    hot_sizes = {}
    for r in used:
        ranked = sorted(per_region[r], key=lambda sn: (-sn[1], sn[0]))[:hot]
        total = totals[r]["count"]
        hot_sizes[r] = [dict(size=s, count=n, bytes=s * n, share=n / total if total else 0.0)
                        for s, n in ranked]

    rows = []
    for size, row in by_size.items():
        if size not in sizes or max(row.values()) < min_count:
            continue
        rows.append(dict(size=size, counts={r: row.get(r, 0) for r in used},
                         bytes={r: row.get(r, 0) * size for r in used},
                         total_count=sum(row.values()), total_bytes=sum(row.values()) * size))
    if top:
        rows.sort(key=lambda x: (-x["total_count"], x["size"]))
        rows = rows[:top]
    else:
        rows.sort(key=lambda x: x["size"])
    return dict(regions=used, distinct_sizes=len(by_size), sizes=rows, totals=totals,
                groups=groups, hot_sizes=hot_sizes, api=api, failed=failed,
                failed_calls=sum(f["calls"] for per in failed.values() for f in per.values()))


def _failed(profiles: Sequence[Profile], kept) -> Dict[str, Dict[str, dict]]:
    """Failed allocation calls of the kept regions: region -> API name -> {calls, sizes:
    [{size (None: not kept by the recorder), calls}], largest count first}. They
    allocated nothing, so they are in no size row and no byte total."""
    acc: Dict[str, Dict[str, Dict[Optional[int], int]]] = {}
    for p in profiles:
        for (r, name, size), n in p.failed_allocs.items():
            if r in kept:
                sizes = acc.setdefault(r, {}).setdefault(name, {})
                sizes[size] = sizes.get(size, 0) + n
    out: Dict[str, Dict[str, dict]] = {}
    for r, per in acc.items():
        out[r] = {}
        for name in _api_order(per):
            sizes = sorted(per[name].items(), key=lambda sn: (-sn[1], sn[0] is None, sn[0] or 0))
            out[r][name] = dict(calls=sum(per[name].values()),
                                sizes=[dict(size=s, calls=n) for s, n in sizes])
    return out

def _region_order(profiles: Sequence[Profile], region: Optional[str]) -> List[str]:
    """Region paths in order of first appearance (region ids within a profile)."""
    order: List[str] = []
    seen = set()
    for p in profiles:
        for rid in sorted(p.regions):
            path = p.regions[rid].path
            if path not in seen and region_matches(path, region):
                seen.add(path)
                order.append(path)
    return order


def _api_order(calls: Dict[str, int]) -> List[str]:
    known = [n for n in fmt.API_NAMES if n in calls]
    return known + sorted(n for n in calls if n not in fmt.API_NAMES)
