"""Section 1, overview: who ran, the totals, and what to mistrust, in plain words at the top."""
from typing import List

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
    out += [f"symbols: {n}" for n in docs.get("notes", [])]
    return out


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
        inputs=docs["inputs"], compare=docs.get("compare"), warnings=warnings(docs))
