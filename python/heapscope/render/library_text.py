"""Text of the `heapscope report --by library` document (analysis.by_library): heap
blocks per library that asked for them, with the blocks in MPI calls, the blocks without
a stack, and (with --size) the sizes per library. Its CSV is in render/csv_tables.py.
"""
from typing import List

from heapscope.analysis.by_library import NO_STACK
from heapscope.render.processes import header_lines
from heapscope.render.text import counted, num, percent, table

SIZES_SHOWN = 10   # sizes listed under each library in text, with --size


def render(doc: dict) -> str:
    n = len(doc["processes"])
    out = [f"heapscope report --by library: {n} process{'es' if n != 1 else ''}"]
    out += ["  " + line for line in header_lines(doc["processes"], n > 1)]
    f = doc["filters"]
    parts = ([f"--region {f['region']}"] if f["region"] else []) + \
            ([f"--size {f['size']}"] if f["size"] else [])
    out.append("  filters   " + (" ".join(parts) if parts else "none"))
    out.append("  stacks    recorded for sizes " + (", ".join(doc["recorded_sizes"]) or "none"))
    out.append("")
    total = doc["totals"]
    out.append(f"Heap blocks by the library that asked for them (first frame outside the C/C++ "
               f"runtime): {counted(total['count'], 'block')}, {counted(total['bytes'], 'byte')}")
    rows = []
    detail = bool(f["size"])
    lines: List[str] = []
    for lib in doc["libraries"]:
        rows.append(_row(lib["name"], lib, lib["in_mpi_count"], lib["in_mpi_bytes"]))
    rest = doc["no_stack"]
    if rest["count"]:
        rows.append(_row(NO_STACK, rest, "", ""))
    out.append(table(["library", "blocks", "share", "bytes", "share", "in MPI calls", "bytes"], rows))
    if rest["count"]:
        sizes = ", ".join(num(s["size"]) for s in rest["sizes"][:SIZES_SHOWN])
        more = len(rest["sizes"]) - SIZES_SHOWN
        listed = sizes + (f", ... {more} more" if more > 0 else "")
        if "all" in doc["recorded_sizes"]:
            out.append(f"  {NO_STACK}: blocks the recorder counted without storing a stack "
                       f"(sizes {listed})")
        else:
            out.append(f"  {NO_STACK}: blocks of sizes whose stacks were not recorded ({listed}); "
                       f"record with --sizes all")
    if doc["lost_stacks"]:
        out.append(f"  {counted(doc['lost_stacks'], 'block')} lost their stack (stack table full): "
                   f"counted under {NO_STACK}")
    if detail:
        for lib in doc["libraries"] + ([dict(rest, name=NO_STACK)] if rest["count"] else []):
            lines.append(f"  {lib['name']}:")
            lines.append(table(["size", "blocks", "bytes"],
                               [[num(s["size"]), num(s["count"]), num(s["bytes"])]
                                for s in lib["sizes"][:SIZES_SHOWN]], left=0, indent="    "))
        out += ["", "Sizes per library (most blocks first)"] + lines
    return "\n".join(out).rstrip() + "\n"


def _row(name, d, mpi_count, mpi_bytes):
    return [name, num(d["count"]), percent(d["share_count"]), num(d["bytes"]),
            percent(d["share_bytes"]), num(mpi_count) if mpi_count != "" else "",
            num(mpi_bytes) if mpi_bytes != "" else ""]
