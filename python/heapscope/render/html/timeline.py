"""Section 5, timeline: heap, RSS and PSS (the program's) and the recorder's own memory
over the run with the region spans (the `timeline` document, per process); for an MPI
job, every rank's application and MPI heap, RSS, PSS and recorder memory on the job's
common grid, their sum, the min/max envelope over the
ranks, the rank table and, from a job file, the stack types that held the ranks' heap
peaks (the `job` document).

The page carries samples as columns (seconds, heap, ...; an unreadable value as null).
A process with more than MAX_POINTS samples is reduced to MAX_POINTS bins holding each
bin's largest value (analysis.timeline.sampled_columns), so no peak is lost."""
from typing import Dict, List, Optional

from heapscope.analysis.timeline import rank_envelopes, sampled_columns

ID, TITLE, SCRIPT = "timeline", "Timeline", "timeline.js"
MAX_POINTS = 100_000


def _nulls(values) -> List[Optional[int]]:
    return [None if v < 0 else int(v) for v in values.tolist()]


def process_columns(proc: dict) -> dict:
    seconds, cols, reduced = sampled_columns(proc, MAX_POINTS)
    keep = ("path", "pid", "rank", "host", "exe", "label", "complete", "warnings", "interval_ns",
            "heap_measure", "duration_s", "sample_count", "recorder_measured", "peaks",
            "heap_peaks", "calipers", "regions")
    return dict({k: proc[k] for k in keep}, reduced_to=MAX_POINTS if reduced else None,
                seconds=seconds, **{k: _nulls(v) for k, v in cols.items()})


def job_data(job: dict) -> Optional[dict]:
    tl = job.get("timeline")
    if not tl:
        return None
    return dict(tl, envelopes=rank_envelopes(tl))


def data(docs: dict) -> dict:
    timeline, job = docs["timeline"], docs["job"]
    out: Dict[str, object] = {}
    if "absent" in job:
        out["job"] = None
    else:
        out["job"] = dict(job_id=job["job_id"], ranks=job["ranks"], hosts=job["hosts"],
                          metrics=job["metrics"], per_rank=job["per_rank"], stats=job["stats"],
                          regions=job["regions"], warnings=job["warnings"], notes=job["notes"],
                          timeline=job_data(job),
                          peak_stacks=(job.get("job_file") or {}).get("peak_stacks"))
    if "absent" in timeline:
        out["processes"] = []
        if out["job"] is None:   # a job without timelines still has its rank table
            out["absent"] = timeline["absent"]
    else:
        out["processes"] = [process_columns(p) for p in timeline["processes"]]
    return out
