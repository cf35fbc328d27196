"""Who held the heap peak on the ranks of an MPI job, from its job file
(profile/job_peak_stacks.py), symbolized: the job report's `peak_stacks` section.

Per type (largest bytes first): its region, its frames (innermost first, as the `peak`
report shows them; none for blocks tracked without stacks), the ranks where it is among
the `per_rank` largest types at the rank's own tracking peak, the blocks and requested
bytes live at those peaks summed over them, the most on one rank and which rank, and
the range of its sizes there. Without --track a rank knows no figure at its peak: the
section is then {"absent": how to record it}, never a made-up figure.
"""
from types import SimpleNamespace
from typing import Optional

from heapscope.analysis.tracked import frames_json
from heapscope.symbolize import Symbolizer

NO_TRACK = ("no rank was recorded with --track, so which stack types held each rank's heap "
            "peak is unknown: record with `heapscope record --track --sizes all -- mpirun ...` "
            "(--track alone gives them per size, without call paths)")
NO_CHUNK = ("this job file holds no stack types at the ranks' peaks (written by a recorder "
            "before them)")


def document(job, symbolizer: Optional[Symbolizer] = None) -> dict:
    """job: a profile.job_file.JobFile."""
    ps = job.peak_stacks
    if ps is None:
        return dict(absent=NO_CHUNK)
    if ps.ranks_tracked == 0:
        return dict(absent=NO_TRACK)
    sym = symbolizer or Symbolizer()
    where = SimpleNamespace(modules=ps.symbol_modules(), path=job.path)
    resolved = sym.resolve(where, {ps.address(f) for t in ps.types for f in t.frames})
    types = []
    for i, t in enumerate(ps.types, 1):
        frames = [f for fr in t.frames for f in resolved[ps.address(fr)]]
        types.append(dict(rank=i, region=t.region, ranks=t.ranks, blocks=t.blocks, bytes=t.bytes,
                          bytes_max=t.bytes_max, max_rank=t.max_rank, size_min=t.size_min,
                          size_max=t.size_max, recorded=t.depth > 0,
                          no_stack=None if t.depth else "not-selected",
                          frames_total=len(frames), frames=frames_json(frames)))
    return dict(ranks_tracked=ps.ranks_tracked, ranks=job.size, per_rank=ps.per_rank,
                exact=ps.missing_bound == 0, missing_bound=ps.missing_bound or None,
                types=types, notes=list(sym.notes))
