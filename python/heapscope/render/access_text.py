"""Text and CSV of the `heapscope access` document (analysis.access.build): the header,
the totals, then per call path (or per size and region) the bytes that could be given
back, largest first, with its frames; per region and per rank at the end."""
import csv
import io
from typing import List, Optional

from heapscope.render.notes import collapse
from heapscope.render.processes import header_lines
from heapscope.render.text import counted, num, percent, table
from heapscope.render.timeline_text import size as size_text
from heapscope.symbolize import Frame

PAGES = {"pagemap-scan": "PAGEMAP_SCAN (Linux >= 6.7)",
         "pagemap": "/proc/self/pagemap flags (the zero page: present, not exclusive)",
         "none": "none: pages not measured"}


def duration(ns: Optional[int]) -> str:
    """A first-touch bound: 0 -> "0", 1500000 -> "1.5 ms"."""
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns} ns"


def _est(value: Optional[int], low: Optional[int], high: Optional[int], unit=num) -> str:
    """'~1,234 (1,100..1,400)'; exact (low == high == value) without the '~'."""
    if value is None:
        return "-"
    if low == high == value:
        return unit(value)
    return f"~{unit(value)} ({unit(low)}..{unit(high)})"


def _fig(e: dict, name: str, unit=num) -> str:
    return _est(e[name], e[name + "_low"], e[name + "_high"], unit)


def first_touch_text(ft: dict) -> str:
    if not ft["blocks"]:
        return "-"
    lo, hi = ft["median_ns_low"], ft["median_ns_high"]
    return f"{duration(lo)}..{duration(hi)}"


def _header(doc: dict) -> List[str]:
    n = len(doc["processes"])
    out = [f"heapscope access: memory allocated and not used, {n} process{'es' if n != 1 else ''}"]
    out += ["  " + line for line in header_lines(doc["processes"], doc["merged"])]
    m = doc["mechanism"]
    pages = m["pages"] if isinstance(m["pages"], str) else ", ".join(m["pages"])
    out.append(f"  pages     read with {PAGES.get(pages, pages)}; blocks from "
               f"{size_text(m['large_bytes'])} on measured in place, smaller ones sampled on "
               f"pages of their own")
    out.append(f"  sampled   one block a mean {num(m['sample_mean'])} bytes of allocations apart: "
               f"figures are estimates (~) with 95% intervals (low..high); sums without")
    out.append(f"  touch     first touches known to within {duration(m['poll_ns'])} (the "
               f"watcher's period): between the last look that saw a block untouched and the "
               f"first that saw it touched")
    for note in collapse(doc["notes"], False):
        out.append(f"  note      {note}")
    return out


def _total_line(t: dict, what: str) -> str:
    measured_bytes = t["touched_bytes"] + t["untouched_bytes"]
    share = t["touched_bytes"] / measured_bytes if measured_bytes else 0.0
    line = (f"{what}: ~{size_text(t['bytes'])} in ~{counted(t['blocks'], 'block')}; "
            f"~{size_text(t['touched_bytes'])} touched ({percent(share)}), "
            f"~{size_text(t['untouched_bytes'])} never touched; "
            f"~{counted(t['never_touched_blocks'], 'block')} never touched, "
            f"~{num(t['read_before_written_blocks'])} read before written "
            f"(from {counted(t['measured'], 'measured sample')})")
    if t["unmeasured_blocks"]:
        line += f"; ~{counted(t['unmeasured_blocks'], 'block')} on paths none of whose samples was measured"
    return line


def render(doc: dict, full_names: bool = False) -> str:
    out = _header(doc) if doc["processes"] else ["heapscope access: memory allocated and not used"]
    if doc["totals"] is not None:
        out += ["", _total_line(doc["totals"], "total")]
    by_size = doc["filters"]["by"] == "size"
    for e in doc["entries"]:
        where = f"size {num(e['size'])} in {e['region']}"
        share = percent(e["touched_share"]) if e["touched_share"] is not None else "-"
        out += ["", f"{e['rank']}/{doc['entries_total']}: {_fig(e, 'untouched_bytes', size_text)} "
                    f"never touched, {where}"]
        rows = [["blocks", _fig(e, "blocks"), f"{num(e['samples'])} sampled, "
                 f"{num(e['measured'])} measured"],
                ["bytes", _fig(e, "bytes", size_text), ""],
                ["touched", _fig(e, "touched_bytes", size_text), f"{share} of the measured bytes"],
                ["never touched", _fig(e, "never_touched_blocks"), "blocks"],
                ["read before written", _fig(e, "read_before_written_blocks"),
                 f"blocks (calloc'd: {num(e['sampled']['zeroed'])} sampled, never counted)"
                 if e["sampled"]["zeroed"] else "blocks"],
                ["first touch", first_touch_text(e["first_touch"]),
                 f"median, of {counted(e['first_touch']['blocks'], 'touched sample')}"]]
        width = max(len(r[1]) for r in rows)
        out += [f"    {label:<20}  {value:>{width}}  {note}".rstrip() for label, value, note in rows]
        if not by_size:
            if not e["frames"]:
                out.append("    (no stack: sampled where stacks were not taken)")
            for i, f in enumerate(e["frames"]):
                out.append(f"    [{i}] {Frame(**f).text(short=not full_names)}")
            hidden = e["frames_total"] - len(e["frames"])
            if hidden > 0:
                out.append(f"    ... {hidden} more frame{'s' if hidden != 1 else ''}")
    if len(doc["entries"]) < doc["entries_total"]:
        out += ["", f"({len(doc['entries'])} of {doc['entries_total']} "
                    f"{'sizes' if by_size else 'call paths'} shown; --top 0 shows all)"]
    if len(doc["regions"]) > 1:
        out += ["", "Per region:", _region_table(doc["regions"])]
    if doc["per_rank"]:
        out += ["", "Per rank (its file):"]
        out.append(_rank_table(doc["per_rank"]))
    if doc.get("job"):
        out += _job(doc["job"])
    return "\n".join(out).rstrip() + "\n"


def _rank_table(ranks) -> str:
    return table(["rank", "bytes", "touched", "never touched", "blocks never touched",
                  "read before written"],
                 [[str(r["rank"]), _approx(r["bytes"]), _approx(r["touched_bytes"]),
                   _approx(r["untouched_bytes"]), _approx(r["never_touched_blocks"], num),
                   _approx(r["read_before_written_blocks"], num)] for r in ranks])


def _job(job: dict) -> List[str]:
    out = ["", f"Job file {job['file']}: {job['ranks_measured']} of {counted(job['ranks'], 'rank')} "
               f"measured (reduced at MPI_Finalize; pages read with {PAGES.get(job['pages'], job['pages'])})"]
    out += [f"  note      {n}" for n in job["notes"]]
    if job["totals"] is not None:
        out += ["", _total_line(job["totals"], "all ranks")]
    if job["entries"]:
        out += ["", "Per size and region, all ranks (the bytes never touched first):"]
        out.append(table(["size", "region", "blocks", "bytes", "touched", "never touched",
                          "blocks never touched", "read before written"],
                         [[num(e["size"]), e["region"], num(e["blocks"]), size_text(e["bytes"]),
                           _fig(e, "touched_bytes", size_text), _fig(e, "untouched_bytes", size_text),
                           _fig(e, "never_touched_blocks"), _fig(e, "read_before_written_blocks")]
                          for e in job["entries"]], left=2))
        if len(job["entries"]) < job["entries_total"]:
            out.append(f"  ({len(job['entries'])} of {job['entries_total']} shown; --top 0 shows all)")
    if len(job["regions"]) > 1:
        out += ["", "Per region, all ranks:", _region_table(job["regions"])]
    out += ["", "Per rank (its own estimates):", _rank_table(job["per_rank"])]
    return out


def _region_table(regions) -> str:
    return table(["region", "bytes", "touched", "never touched", "blocks never touched",
                  "read before written"],
                 [[r["region"], _approx(r["bytes"]), _approx(r["touched_bytes"]),
                   _approx(r["untouched_bytes"]), _approx(r["never_touched_blocks"], num),
                   _approx(r["read_before_written_blocks"], num)] for r in regions])


def _approx(v: Optional[int], unit=size_text) -> str:
    return "-" if v is None else f"~{unit(v)}"


CSV_FIELDS = ("rank", "size", "region", "samples", "measured", "blocks", "blocks_low", "blocks_high",
              "bytes", "touched_bytes", "touched_bytes_low", "touched_bytes_high",
              "untouched_bytes", "untouched_bytes_low", "untouched_bytes_high",
              "never_touched_blocks", "never_touched_blocks_low", "never_touched_blocks_high",
              "read_before_written_blocks", "read_before_written_blocks_low",
              "read_before_written_blocks_high", "first_touch_median_ns_low",
              "first_touch_median_ns_high")


def render_csv(doc: dict) -> str:
    """One row per entry: CSV_FIELDS, then its frames' functions innermost first."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(list(CSV_FIELDS) + ["frames"])
    for e in doc["entries"]:
        ft = e["first_touch"]
        values = dict(e, first_touch_median_ns_low=ft["median_ns_low"],
                      first_touch_median_ns_high=ft["median_ns_high"])
        w.writerow(["" if values[k] is None else values[k] for k in CSV_FIELDS]
                   + [" <- ".join(f["function"] for f in e["frames"])])
    return buf.getvalue()
