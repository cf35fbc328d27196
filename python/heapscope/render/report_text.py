"""Text of the `heapscope report` document (analysis.identify.build): the process header, then
per section the size x region table, the size groups, the hot sizes and the calls per API
function."""
from typing import List

from heapscope.profile.format import API_NAMES
from heapscope.analysis.identify import GROUPS
from heapscope.render.processes import header_lines, label
from heapscope.render.text import counted, num, percent, table


def render(doc: dict) -> str:
    n = len(doc["processes"])
    out = [f"heapscope report: {n} process{'es' if n != 1 else ''}"]
    out += ["  " + line for line in header_lines(doc["processes"], doc["merged"])]
    out += [f"  left out  {d['file']}: {d['why']}" for d in doc.get("left_out", ())]
    out.append(_filters_line(doc["filters"]))
    if doc.get("per_process") is not None:
        for sec in doc["per_process"]:
            proc = doc["processes"][sec["process"]]
            out.append("")
            out.append(f"=== {label(proc)}: {' '.join(proc['cmdline']) or proc['exe']}")
            out += _section(sec, doc["filters"])
        if doc["merged"] or len(doc["processes"]) > 1:
            out.append("")
            out.append(f"=== all {n} processes merged")
            out += _section(doc, doc["filters"])
    else:
        out += _section(doc, doc["filters"])
    if doc.get("hot_sizes_hint") is not None:
        out += [""] + hot_sizes_hint_lines(doc["hot_sizes_hint"])
    return "\n".join(out).rstrip() + "\n"


def hot_sizes_hint_lines(hint: dict) -> list:
    """`report --hot-sizes-hint`: the hsmalloc setting that gives these sizes exact classes."""
    hot = hint["hot_sizes"]
    share = f"{100 * hint['min_share']:g}%"
    if not hot:
        return [f"hot sizes for hsmalloc: no size class takes {share} of the "
                f"{counted(hint['total_allocations'], 'allocation')}; nothing to name"]
    value = hint["variable"]["HSMALLOC_HOT_SIZES"]
    taken = sum(h["count"] for h in hot) / hint["total_allocations"]
    out = [f"hot sizes for hsmalloc: {counted(len(hot), 'class', 'classes')} take "
           f"{percent(taken)} of the {counted(hint['total_allocations'], 'allocation')}"]
    for h in hot:
        out.append(f"  {h['size']:>6} B  {percent(h['share']):>6}  from sizes "
                   + ", ".join(map(str, h["sizes"][:6])) + (" ..." if len(h["sizes"]) > 6 else ""))
    out.append(f"  export HSMALLOC_HOT_SIZES={value}      # preloaded under mpirun/srun")
    out.append("  heapscope run --allocator hsmalloc --hot-sizes PROFILE|DIR -- CMD ARGS...")
    return out


def _filters_line(f: dict) -> str:
    parts = []
    if f["region"]:
        parts.append(f"--region {f['region']}")
    if f["size"]:
        parts.append(f"--size {f['size']}")
    if f["min_count"]:
        parts.append(f"--min-count {f['min_count']}")
    if f["top"]:
        parts.append(f"--top {f['top']}")
    return "  filters   " + (" ".join(parts) if parts else "none")


def _section(sec: dict, filters: dict) -> List[str]:
    regions = sec["regions"]
    out = [""]
    if not regions:
        out.append("No allocations recorded" + (" in the selected regions." if filters["region"] else "."))
        return out
    out += _size_table(sec, filters)
    out += ["", "Size groups per region: small <= 256 KiB, mid <= 1 MiB, large > 1 MiB"]
    rows = []
    for r in regions:
        g = sec["groups"][r]
        rows.append([r] + [num(g[name][k]) for name in GROUPS for k in ("count", "bytes")])
    out.append(table(["region"] + [f"{name} {k}" for name in GROUPS for k in ("count", "bytes")], rows))

    hot = filters["hot"]
    out += ["", f"Hot sizes per region (top {hot} by count; share of the region's allocations)"]
    for r in regions:
        total = sec["totals"][r]
        out.append(f"  {r}: {counted(total['count'], 'allocation')}, {counted(total['bytes'], 'byte')}")
        rows = [[str(i), num(h["size"]), num(h["count"]), percent(h["share"]), num(h["bytes"])]
                for i, h in enumerate(sec["hot_sizes"][r], 1)]
        if rows:
            out.append(table(["#", "size", "count", "share", "bytes"], rows, left=0, indent="    "))

    names = []
    for r in regions:
        names += [n for n in sec["api"][r] if n not in names]
    names.sort(key=lambda n: API_NAMES.index(n) if n in API_NAMES else len(API_NAMES))
    out += ["", "Calls per API function and region"]
    if names:
        rows = [[name] + [num(sec["api"][r].get(name, 0)) for r in regions] for name in names]
        out.append(table(["function"] + regions, rows))
    else:
        out.append("  none recorded")
    out += _failed_lines(sec)
    return out


MAX_FAILED_SIZES = 4    # requested sizes named per function; JSON has them all


def _failed_lines(sec: dict) -> List[str]:
    """The calls that returned no block, apart: they are in no size row or byte total."""
    if not sec.get("failed_calls"):
        return []
    out = ["", f"Failed allocation calls: {num(sec['failed_calls'])} (no block returned; in no size "
               f"row or byte total)"]
    rows = []
    for r, per in sec["failed"].items():
        for name, f in per.items():
            sizes = [f"{num(s['size']) if s['size'] is not None else 'size not kept'} x{num(s['calls'])}"
                     for s in f["sizes"][:MAX_FAILED_SIZES]]
            more = len(f["sizes"]) - MAX_FAILED_SIZES
            rows.append([r, name, num(f["calls"]),
                         ", ".join(sizes) + (f", ... {more} more sizes" if more > 0 else "")])
    out.append(table(["region", "function", "calls", "requested sizes"], rows, left=2))
    return out


def _size_table(sec: dict, filters: dict) -> List[str]:
    regions = sec["regions"]
    shown, distinct = len(sec["sizes"]), sec["distinct_sizes"]
    order = "most allocations first" if filters["top"] else "by size"
    out = [f"Allocations per size and region ({num(shown)} of {counted(distinct, 'size')}, {order})"]
    if not sec["sizes"]:
        out.append("  no size passes the filters")
        return out
    several = len(regions) > 1
    header = ["size"] + regions + (["total"] if several else []) + ["bytes"]
    rows = []
    for row in sec["sizes"]:
        cells = [num(row["size"])] + [num(row["counts"][r]) for r in regions]
        if several:
            cells.append(num(row["total_count"]))
        cells.append(num(row["total_bytes"]))
        rows.append(cells)
    all_count = sum(t["count"] for t in sec["totals"].values())
    all_bytes = sum(t["bytes"] for t in sec["totals"].values())
    rows.append(["all sizes"] + [num(sec["totals"][r]["count"]) for r in regions]
                + ([num(all_count)] if several else []) + [num(all_bytes)])
    text = table(header, rows, left=0)
    lines = text.split("\n")
    # A rule above the totals row.
    lines.insert(len(lines) - 1, "  " + "-" * (len(lines[0]) - 2))
    out += lines
    return out
