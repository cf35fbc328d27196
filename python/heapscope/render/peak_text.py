"""Text and CSV of the `heapscope peak` document (analysis.peak)."""
import csv
import io

from heapscope.render.histogram_text import format_ns
from heapscope.render.processes import label
from heapscope.render.text import counted, num, percent, table
from heapscope.render.tracked_text import est, frame_lines, frames_cell, header_text


def render(doc: dict, full_names: bool = False, verbose: bool = False) -> str:
    out = header_text("peak", doc, verbose)
    for pk in doc["peaks"]:
        proc = doc["processes"][pk["process"]]
        at_least = "at least " if pk.get("peak_lower_bound") else ""
        out += ["", f"Heap peak of {label(proc)}: {at_least}{num(pk['peak_bytes'])} bytes requested, "
                    f"at {format_ns(pk['peak_mono_ns'])} after start "
                    f"({num(pk['end_bytes'])} bytes live at the snapshot)"]
        if pk.get("peak_lower_bound"):
            nbytes = pk.get("untracked_bytes")
            out.append(f"  a lower bound: {counted(pk['untracked_blocks'], 'allocation')}"
                       f"{f' of {num(nbytes)} bytes' if nbytes is not None else ''} were not "
                       f"tracked (table full); how much of them was live at the peak is unknown")
        elif pk["unattributed_bytes"]:
            out.append(f"  {num(pk['unattributed_bytes'])} bytes of the peak were in untracked blocks")
        if doc["filters"]["size"] != "all" or doc["filters"]["region"]:
            out.append(f"  the selection holds {num(pk['selected_bytes'])} bytes of it "
                       f"({percent(pk['selected_share'])})")
        if not pk["sizes"]:
            out.append("  no selected block was live at the peak")
            continue
        rows = [[num(s["size"]), num(s["bytes"]), percent(s["share"]), num(s["blocks"]), str(s["types"])]
                for s in pk["sizes"]]
        out += ["", "  Sizes by bytes live at the peak:",
                table(["size", "bytes", "of peak", "blocks", "types"], rows, left=0, indent="    ")]
        out += ["", "  Stack trace types by bytes live at the peak:"]
        for t in pk["stack_types"]:
            out += ["", f"  {t['rank']}. {est(t)}{num(t['bytes'])} bytes ({percent(t['share'])} of the peak): "
                        f"{est(t)}{counted(t['blocks'], 'block')} of size {num(t['size'])} in {t['region']}"]
            out += frame_lines(t, full_names, "    ")
        if len(pk["stack_types"]) < pk["holders"]:
            out += ["", f"  ({len(pk['stack_types'])} of {pk['holders']} types shown; --top 0 shows all)"]
    return "\n".join(out).rstrip() + "\n"


def render_csv(doc: dict) -> str:
    """process,section,rank,size,region,blocks,bytes,share,frames
    section peak (bytes = the peak, rank = ns after start), size or type."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["process", "section", "rank", "size", "region", "blocks", "bytes", "share", "frames"])
    for pk in doc["peaks"]:
        proc = doc["processes"][pk["process"]]["pid"]
        w.writerow([proc, "peak", pk["peak_mono_ns"], "", "", "", pk["peak_bytes"], "1.000000", ""])
        for s in pk["sizes"]:
            w.writerow([proc, "size", s["rank"], s["size"], "", s["blocks"], s["bytes"], f"{s['share']:.6f}", ""])
        for t in pk["stack_types"]:
            w.writerow([proc, "type", t["rank"], t["size"], t["region"], t["blocks"], t["bytes"],
                        f"{t['share']:.6f}", frames_cell(t)])
    return buf.getvalue()
