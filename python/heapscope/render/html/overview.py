"""Section 1, overview: who ran, the totals, and what to mistrust, in plain words at the
top; then the page's notes, each said once (one line per kind, its notes in a fold)."""
from typing import List

from heapscope.render.notes import kinds
from heapscope.render.processes import label
from heapscope.render.text import counted

ID, TITLE, SCRIPT = "overview", "Overview", "overview.js"


def warnings(docs: dict) -> List[str]:
    """Everything that makes a figure of the page incomplete, one sentence each."""
    report = docs["report"]
    procs = report["processes"]
    out = []
    for d in procs:
        who = f"{label(d)}: " if len(procs) > 1 else ""
        out += [who + w for w in d["warnings"]]     # the reader's: lost stacks, a cut tail...
        if not d["complete"] and not d["warnings"]:
            out.append(f"{who}the file was cut short (the process did not end normally): "
                       f"figures are those of its last complete snapshot")
    tracking = docs.get("tracking") or {}
    if tracking.get("untracked"):
        nbytes = tracking.get("untracked_bytes")
        of = f" of {nbytes:,} bytes" if nbytes is not None else ""
        out.append(f"{counted(tracking['untracked'], 'block')}{of} could not be tracked (the table "
                   f"was full): lifetimes, the peak's holders and leaks miss them, and the heap "
                   f"peak is a lower bound")
    job = docs.get("job") or {}
    out += job.get("warnings", [])
    out += [docs["left_out"]] if docs.get("left_out") else []   # MPI launchers and daemons
    return out


def notes(docs: dict) -> List[dict]:
    """Every note of the page's documents (the symbolizer's, the stacks', the MPI job's),
    each once, by kind: {line, notes} (notes: the kind's every note, when more than one)."""
    stacks = docs.get("stacks") or {}
    job = docs.get("job") or {}
    peak_stacks = (job.get("job_file") or {}).get("peak_stacks") or {}
    found = (list(docs.get("notes", [])) + list(stacks.get("notes", [])) +
             list(job.get("notes", [])) + list(peak_stacks.get("notes", [])))
    return [dict(line=k.summary, notes=k.members if len(k.members) > 1 else [])
            for k in kinds(found)]


def data(docs: dict) -> dict:
    report = docs["report"]
    totals = report["totals"]
    job = docs.get("job") or {}
    return dict(
        processes=report["processes"], merged=report["merged"], regions=report["regions"],
        totals=totals, distinct_sizes=report["distinct_sizes"],
        all_regions=dict(count=sum(t["count"] for t in totals.values()),
                         bytes=sum(t["bytes"] for t in totals.values())),
        job=None if "absent" in job else dict(job_id=job["job_id"], ranks=job["ranks"],
                                               hosts=job["hosts"]),
        inputs=docs["inputs"], compare=docs.get("compare"), warnings=warnings(docs),
        notes=notes(docs))
