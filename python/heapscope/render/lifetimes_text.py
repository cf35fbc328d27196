"""Text and CSV of the `heapscope lifetimes` and `heapscope temporaries` documents
(analysis.lifetimes)."""
import csv
import io

from heapscope.render.histogram_text import bound_text, histogram_line, range_text, span_text
from heapscope.render.text import counted, num, percent, table
from heapscope.render.tracked_text import est, frame_lines, frames_cell, header_text


def _range(p, time: bool) -> str:
    return "-" if p is None else range_text(p["lo"], p["hi"], time)


def _hist_line(label: str, summary: dict, time: bool) -> str:
    if not summary["count"]:
        return f"{label:<18} (none freed)"
    counts = [0] * (max(b["bin"] for b in summary["bins"]) + 1)
    for b in summary["bins"]:
        counts[b["bin"]] = b["count"]
    span = span_text(summary["bins"][0]["bin"], summary["bins"][-1]["bin"], time)
    return (f"{label:<18} |{histogram_line(counts)}| {span}   "
            f"median {_range(summary['median'], time)}, p90 {_range(summary['p90'], time)}")


def _figures_text(f: dict) -> str:
    return (f"{counted(f['allocs'], 'allocation')}, {num(f['frees'])} freed, {num(f['live_at_end'])} live "
            f"at the snapshot, {counted(f['temporaries'], 'temporary', 'temporaries')}")


def render_lifetimes(doc: dict, full_names: bool = False, verbose: bool = False) -> str:
    out = header_text("lifetimes", doc, verbose)
    out.append(f"  temporary {bound_text(doc['tracking']['temporary_max_between'], doc['tracking']['temporary_max_ns'])}")
    out.append("  bins      log2: lifetimes in time (ns) and in allocations of the same thread in "
               "between; median and p90 are the bins holding them")
    for s in doc["sizes"]:
        out += ["", f"Size {num(s['size'])} ({', '.join(s['regions'])}): {s['types']} stack trace "
                    f"type{'s' if s['types'] != 1 else ''}, {_figures_text(s)}"]
        if s["extra"]:
            e = s["extra"]
            out.append(f"  extra heap: {e['per_block']:.4g} B per block beyond the requested size "
                       f"({num(e['bytes'])} B over {counted(e['blocks'], 'block')})")
        out.append("  " + _hist_line("lifetime (time)", s["time"], True))
        out.append("  " + _hist_line("allocs in between", s["between"], False))
        for t in s["stack_types"]:
            out += ["", f"  Stack trace type {t['rank']}/{s['types']} in {t['region']}: {est(t)}{_figures_text(t)}"]
            out.append("    " + _hist_line("lifetime (time)", t["time"], True))
            out.append("    " + _hist_line("allocs in between", t["between"], False))
            out += frame_lines(t, full_names, "    ")
        if len(s["stack_types"]) < s["types"]:
            out += ["", f"  ({len(s['stack_types'])} of {s['types']} types shown; --top 0 shows all)"]
    return "\n".join(out).rstrip() + "\n"


def render_temporaries(doc: dict, full_names: bool = False, verbose: bool = False) -> str:
    out = header_text("temporaries", doc, verbose)
    b = doc["bound"]
    out.append(f"  temporary {bound_text(b['max_between'], b['max_ns'])}")
    tot = doc["totals"]
    out += ["", f"{num(tot['temporaries'])} of {counted(tot['allocs'], 'allocation')} "
                f"{'was a temporary' if tot['temporaries'] == 1 else 'were temporaries'} "
                f"({percent(tot['share'])})."]
    if not doc["sizes"]:
        return "\n".join(out).rstrip() + "\n"
    rows = [[num(s["size"]), num(s["temporaries"]), num(s["allocs"]), percent(s["share"]),
             percent(s["share_of_temporaries"])] for s in doc["sizes"]]
    out += ["", "Sizes by temporaries:",
            table(["size", "temporaries", "allocations", "of size", "of all temps"], rows, left=0)]
    out += ["", "Stack trace types by temporaries:"]
    for t in doc["stack_types"]:
        out += ["", f"  {t['rank']}. size {num(t['size'])} in {t['region']}: {est(t)}{num(t['temporaries'])} "
                    f"temporaries of {est(t)}{num(t['allocs'])} "
                    f"allocations ({percent(t['share'])}; {percent(t['share_of_temporaries'])} of all "
                    f"temporaries)"]
        out += frame_lines(t, full_names, "    ")
    shown, total = len(doc["stack_types"]), tot["types_with_temporaries"]
    if shown < total:
        out += ["", f"({shown} of {total} types shown; --top 0 shows all)"]
    return "\n".join(out).rstrip() + "\n"


def lifetimes_csv(doc: dict) -> str:
    """size,region,type,measure,bin,lo,hi,count,allocs,frees,live_at_end,temporaries,frames
    one row per non-empty bin (measure time or between); type 0 is the whole size."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["size", "region", "type", "measure", "bin", "lo", "hi", "count", "allocs", "frees",
                "live_at_end", "temporaries", "frames"])
    for s in doc["sizes"]:
        rows = [(0, ";".join(s["regions"]), s, "")] + [(t["rank"], t["region"], t, frames_cell(t))
                                                        for t in s["stack_types"]]
        for rank, region, f, frames in rows:
            for measure in ("time", "between"):
                for b in f[measure]["bins"]:
                    w.writerow([s["size"], region, rank, measure, b["bin"], b["lo"],
                                "" if b["hi"] is None else b["hi"], b["count"], f["allocs"], f["frees"],
                                f["live_at_end"], f["temporaries"], frames])
    return buf.getvalue()


def temporaries_csv(doc: dict) -> str:
    """section,rank,size,region,temporaries,allocs,share,frames (section size or type)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["section", "rank", "size", "region", "temporaries", "allocs", "share", "frames"])
    for s in doc["sizes"]:
        w.writerow(["size", s["rank"], s["size"], "", s["temporaries"], s["allocs"], f"{s['share']:.6f}", ""])
    for t in doc["stack_types"]:
        w.writerow(["type", t["rank"], t["size"], t["region"], t["temporaries"], t["allocs"],
                    f"{t['share']:.6f}", frames_cell(t)])
    return buf.getvalue()
