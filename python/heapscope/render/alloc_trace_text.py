"""Text of the replayed event trace (analysis.alloc_trace): the events by kind, what the
replay gives (address space, segments, pages, purges: peak, when, end), the pressure
levels, and the heaps that took the most pages."""
from typing import Dict, List

from heapscope.render.text import counted, num, table
from heapscope.render.timeline_text import size

HEAPS_SHOWN = 10


def _t(us) -> str:
    if us is None:
        return "-"
    return f"{us / 1e6:.3f} s" if us >= 1_000_000 else f"{us / 1e3:.1f} ms"


def render_trace(doc: Dict) -> str:
    out: List[str] = [f"hsmalloc event trace: {doc['file']}, process {doc['pid']}, "
                      f"{counted(doc['events'], 'event')} over {_t(doc['duration_us'])}"]
    if doc["cut_line"]:
        out.append(f"  line {doc['cut_line']} was cut short (the program ended while writing it): "
                   f"the events before it are read")
    out.append("")
    out.append(table(["event", "count", "bytes"],
                     [[k["event"], num(k["count"]), "-" if k["bytes"] is None else size(k["bytes"])]
                      for k in doc["kinds"] if k["count"]]))
    out.append("")
    out.append("replayed")
    rows = []
    for key, label, fmt in (("mapped_bytes", "address space mapped", size),
                            ("heap_segments", "segments held by heaps", num),
                            ("pages", "pages in use", num),
                            ("page_bytes", "bytes of pages in use", size)):
        r = doc[key]
        rows.append([label, fmt(r["peak"]), _t(r["peak_t_us"]), fmt(r["end"])])
    out.append(table(["figure", "peak", "at", "end"], rows))
    out.append(f"  given back to the OS: {size(doc['purged_bytes'])} in "
               f"{counted(doc['purges'], 'purge')}")
    p = doc["pressure"]
    out.append("")
    if not p["readings"]:
        out.append("memory pressure: no level change traced")
    else:
        spent = ", ".join(f"{name} {_t(us)}" for name, us in p["time_at_level_us"].items() if us)
        out.append(f"memory pressure: {counted(p['readings'], 'level event')}; time at each "
                   f"level: {spent or '-'}")
        rows = [[_t(c["t_us"]), str(c["level"]), f"{c['headroom_permille'] / 10:.1f}%"]
                for c in p["changes"][:20]]
        out.append(table(["at", "level", "headroom"], rows))
        if len(p["changes"]) > 20:
            out.append(f"  ... {len(p['changes']) - 20} more changes (--format json lists all)")
    if doc["heaps"]:
        out.append("")
        shown = doc["heaps"][:HEAPS_SHOWN]
        out.append(f"heaps by page bytes taken ({len(shown)} of {len(doc['heaps'])})")
        out.append(table(["heap", "segments new", "reused", "freed", "pages taken", "bytes",
                          "given back", "bytes"],
                         [[str(h["heap"]), num(h["segments_new"]), num(h["segments_reused"]),
                           num(h["segments_freed"]), num(h["pages_taken"]), size(h["page_bytes_taken"]),
                           num(h["pages_given_back"]), size(h["page_bytes_given_back"])]
                          for h in shown]))
    return "\n".join(out) + "\n"
