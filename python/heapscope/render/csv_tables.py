"""CSV forms of the report, library, stacks and diff documents: one tidy table each, one
row per figure.

report: section,process,region,item,count,bytes,share
    section size (item = size), group (item = small/mid/large), hot (item = size,
    share of the region's allocations), api (item = function name, count = calls);
    process "all" for the merged view, else the process's pid (its rank under MPI).
stacks: process,size,region,type,type_count,type_bytes,frame,function,file,line,module,inlined
    one row per frame of every stack trace type shown (process as for report).
library (report --by library): library,name,size,count,bytes,in_mpi_count,in_mpi_bytes
    one row per library with size "all", then one row per library and size; the
    blocks without a recorded stack are the library "(no stack)".
diff: kind,region,size,count_a,count_b,delta,ratio,bytes_a,bytes_b,bytes_delta,status,stack
    kind total (region and size empty), size (one per region and size), stack (with
    --stacks: the frames "innermost <- ... <- outermost").
"""
import csv
import io

from heapscope.analysis.by_library import NO_STACK
from heapscope.analysis.diff import change_row
from heapscope.analysis.stacks import frame_name

DIFF_FIELDS = ["kind", "region", "size", "count_a", "count_b", "delta", "ratio", "bytes_a", "bytes_b",
               "bytes_delta", "status", "stack"]
# several runs per side (diff --before ... --after ...): each side's runs and range
DIFF_RUN_FIELDS = ["runs_a", "runs_b", "count_a_min", "count_a_max", "count_b_min", "count_b_max"]


def _process_name(doc: dict, index) -> str:
    if index is None:
        return "all"
    d = doc["processes"][index]
    return f"rank{d['rank']}" if d["rank"] is not None else str(d["pid"])


def report_csv(doc: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["section", "process", "region", "item", "count", "bytes", "share"])
    sections = [(None, doc)] if doc.get("per_process") is None else \
        [(s["process"], s) for s in doc["per_process"]] + ([(None, doc)] if len(doc["processes"]) > 1 else [])
    for index, sec in sections:
        proc = _process_name(doc, index)
        for row in sec["sizes"]:
            for r in sec["regions"]:
                if row["counts"][r]:
                    w.writerow(["size", proc, r, row["size"], row["counts"][r], row["bytes"][r], ""])
        for r in sec["regions"]:
            for name, g in sec["groups"][r].items():
                w.writerow(["group", proc, r, name, g["count"], g["bytes"], ""])
            for h in sec["hot_sizes"][r]:
                w.writerow(["hot", proc, r, h["size"], h["count"], h["bytes"], f"{h['share']:.6f}"])
            for name, calls in sec["api"][r].items():
                w.writerow(["api", proc, r, name, calls, "", ""])
            for name, f in sec.get("failed", {}).get(r, {}).items():
                for s in f["sizes"]:
                    w.writerow(["failed", proc, r, f"{name} {'' if s['size'] is None else s['size']}".strip(),
                                s["calls"], "", ""])
    return buf.getvalue()


def stacks_csv(doc: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    # sampled stacks (record --sample-bytes): type_count is an estimate, type_samples and
    # the interval say how good; empty for exact stacks
    w.writerow(["process", "size", "region", "type", "type_count", "type_bytes", "type_samples",
                "type_count_low", "type_count_high", "frame", "function", "file", "line", "module",
                "inlined"])
    sections = [(None, doc)] if doc.get("per_process") is None else \
        [(s["process"], s) for s in doc["per_process"]] + ([(None, doc)] if len(doc["processes"]) > 1 else [])
    for index, sec in sections:
        proc = _process_name(doc, index)
        for group in sec["groups"]:
            for t in group["stack_types"]:
                for i, f in enumerate(t["frames"]):
                    w.writerow([proc, group["size"], group["region"], t["rank"], t["count"], t["bytes"],
                                t.get("samples", ""), t.get("count_low", ""), t.get("count_high", ""),
                                i, f["function"], f["file"], f["line"], f["module"], int(f["inlined"])])
    return buf.getvalue()


def library_csv(doc: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["library", "name", "size", "count", "bytes", "in_mpi_count", "in_mpi_bytes"])
    libs = doc["libraries"] + [dict(doc["no_stack"], library=NO_STACK, name=NO_STACK,
                                    in_mpi_count="", in_mpi_bytes="")]
    for lib in libs:
        w.writerow([lib["library"], lib["name"], "all", lib["count"], lib["bytes"],
                    lib["in_mpi_count"], lib["in_mpi_bytes"]])
    for lib in libs:
        for s in lib["sizes"]:
            w.writerow([lib["library"], lib["name"], s["size"], s["count"], s["bytes"], "", ""])
    return buf.getvalue()


def diff_csv(result: dict) -> str:
    """The comparison of analysis.diff.compare."""
    buf = io.StringIO()
    several = result.get("runs", (1, 1)) != (1, 1)
    w = csv.DictWriter(buf, fieldnames=DIFF_FIELDS + (DIFF_RUN_FIELDS if several else []),
                       lineterminator="\n")
    w.writeheader()
    w.writerow(change_row("total", result["total"], "", ""))
    for r in result["sizes"]:
        w.writerow(change_row("size", r, r.region, r.size))
    for s in result.get("stacks") or []:
        w.writerow(change_row("stack", s, s.region, s.size,
                              " <- ".join(frame_name(f) for f in s.stack.frames)))
    return buf.getvalue()
