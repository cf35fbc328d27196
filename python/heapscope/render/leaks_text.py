"""Text and CSV of the `heapscope leaks` document (analysis.leaks)."""
import csv
import io

from heapscope.render.text import counted, num, table
from heapscope.render.tracked_text import est, frame_lines, frames_cell, header_text


def render(doc: dict, full_names: bool = False, verbose: bool = False) -> str:
    out = header_text("leaks", doc, verbose)
    reasons = sorted({p["reason"] for p in doc["processes"]})
    if reasons != ["exit"]:
        out.append(f"  note      leaks are blocks not freed at the snapshot ({', '.join(reasons)}), "
                   f"not only at exit")
    tot = doc["totals"]
    for t in doc["leaks"]:
        out += ["", f"Leak {t['rank']}/{tot['reported_types']}: {est(t)}{num(t['bytes'])} bytes in {est(t)}{num(t['blocks'])} "
                    f"block{'s' if t['blocks'] != 1 else ''} of size {num(t['size'])} in {t['region']} "
                    f"(of {num(t['allocs'])} allocated there)"]
        out += frame_lines(t, full_names, "    ")
    if len(doc["leaks"]) < tot["reported_types"]:
        out += ["", f"({len(doc['leaks'])} of {tot['reported_types']} leaking types shown; --top 0 shows all)"]
    sup = doc["suppressions"]
    if sup["file"]:
        rows = [[str(r["types"]), num(r["blocks"]), num(r["bytes"]), r["pattern"]] for r in sup["rules"]]
        out += ["", f"Suppressions used ({sup['file']}):",
                table(["types", "blocks", "bytes", "pattern"], rows, left=0)]
    out += ["", f"SUMMARY: {num(tot['reported_bytes'])} bytes leaked in {num(tot['reported_blocks'])} "
                f"block{'s' if tot['reported_blocks'] != 1 else ''} ({tot['reported_types']} stack trace "
                f"type{'s' if tot['reported_types'] != 1 else ''}); {num(tot['suppressed_bytes'])} bytes in "
                f"{counted(tot['suppressed_blocks'], 'block')} suppressed ({counted(tot['suppressed_types'], 'type')})."]
    return "\n".join(out).rstrip() + "\n"


def render_csv(doc: dict) -> str:
    """status,rank,size,region,blocks,bytes,suppressed_by,frames (status reported or suppressed)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["status", "rank", "size", "region", "blocks", "bytes", "suppressed_by", "frames"])
    for status, rows in (("reported", doc["leaks"]), ("suppressed", doc["suppressed"])):
        for t in rows:
            w.writerow([status, t["rank"], t["size"], t["region"], t["blocks"], t["bytes"],
                        t["suppressed_by"] or "", frames_cell(t)])
    return buf.getvalue()
