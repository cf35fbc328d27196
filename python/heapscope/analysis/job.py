"""The job report (`heapscope report DIR` on an MPI job's rank files), as plain data.

One RankSummary per rank process, made from its profile by summarize() (small, so
that thousands of ranks can be read in worker processes, see job_loading); build()
turns them into the document: per rank, the peaks of total, application and MPI
memory; min, max and mean over the ranks with which rank on which host; the same per
region; the timelines (analysis.timeline.job_timelines).

Where the figures come from:
  allocated   heap blocks and bytes allocated over the run (the snapshot's counts):
              MPI = blocks allocated inside MPI calls (regions named "[MPI]"),
              application = all others. Always present.
  heap        peaks of heap in use: total, MPI (blocks allocated inside MPI calls),
              application (total - MPI, its own peak). Exact when the recorder wrote
              them (HEAP_PEAK: kept at every allocation and free); from a recorder that
              did not, the largest timeline sample, a lower bound: the metric is then
              marked sampled ("heap peak (sampled)"). None when heap in use was not
              measured (recorded without --mpi, --track or HEAPSCOPE_TIMELINE_HEAP=1).
  rss, pss    peak resident and proportional set size of the program over the samples
              (/proc/self/smaps_rollup), always sampled: net of the recorder's own memory
              (its tables, rings, buffers), whose peak is recorder_peak; in files of older
              recorders recorder_peak is None and RSS/PSS include it (a warning says so);
              mpi_rss, mpi_pss: the calipers' MPI non-heap memory (docs/report-formats.md
              defines it).
  tracked     requested bytes live at the heap peak (record --track).
A metric a profile does not carry is None for that rank and left out of the stats.
A rank whose file has no snapshot (killed by SIGKILL: OOM killer, scheduler) is kept
with what its timeline gives (summarize(..., has_snapshot=False): reason "none", every
count None); a rank file with neither a snapshot nor timeline samples is left out
("excluded"), with a warning.
How each rank ended (RankSummary.ended, rank_fate): "exit"; "no-finalize" (an exit
after MPI calls without MPI_Finalize: the MPI library ending a rank whose launcher went
away; PROCESS_END says so, with the status and whether the launcher had ended);
"crash" (its crash handler's snapshot: which signal); "mpi-abort" (MPI_Abort's
snapshot: its code); "killed" (its last snapshot was written on SIGTERM/SIGINT or
another signal that ends a process: a launcher tearing the job down after another
rank failed, or a scheduler); "no-snapshot" (killed by SIGKILL: its
last timeline data; endings.no_data: killed before its first timeline flush); "exec"
or "api" (its last snapshot before an exec or a dump).
Rank numbers with no file at all are listed as "missing": those below the highest
one recorded, and those the recorded launcher was asked for (`mpirun -np 4`).
A region is named by its application path: "[MPI]" components are taken off, so
"solve/[MPI]" counts as MPI memory of region "solve".
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from heapscope.analysis.job_peak_stacks import document as peak_stacks_document
from heapscope.analysis.job_processes import choose_rank_process, describe_others
from heapscope.analysis.processes import is_launcher
from heapscope.analysis.timeline import caliper_figures, job_timelines, sample_columns
from heapscope.errors import HeapscopeError
from heapscope.profile.ending import describe as describe_ending
from heapscope.profile.model import Profile
from heapscope.profile.timeline import NO_SNAPSHOT_WARNING

JOB_FORMAT = "heapscope-job"
JOB_VERSION = 1
MPI_REGION = "[MPI]"
NO_SNAPSHOT = "none"      # the reason of a rank that has no snapshot
FINALIZE = "finalize"     # the reason of a rank summarized in the job file (at MPI_Finalize)
TOP = "(none)"

# (key, title, unit) in report order
METRICS = (
    ("alloc_blocks", "allocated blocks", "blocks"),
    ("alloc_app_blocks", "allocated blocks, application", "blocks"),
    ("alloc_mpi_blocks", "allocated blocks, MPI", "blocks"),
    ("alloc_bytes", "allocated bytes", "bytes"),
    ("alloc_app_bytes", "allocated bytes, application", "bytes"),
    ("alloc_mpi_bytes", "allocated bytes, MPI", "bytes"),
    ("heap_peak", "heap peak", "bytes"),
    ("heap_app_peak", "heap peak, application", "bytes"),
    ("heap_mpi_peak", "heap peak, MPI", "bytes"),
    ("rss_peak", "RSS peak", "bytes"),
    ("pss_peak", "PSS peak", "bytes"),
    ("recorder_peak", "recorder's own memory peak, not in RSS/PSS", "bytes"),
    ("mpi_rss", "MPI non-heap RSS peak (calipers)", "bytes"),
    ("mpi_pss", "MPI non-heap PSS peak (calipers of the calls that map memory)", "bytes"),
    ("tracked_peak", "live requested bytes at heap peak", "bytes"),
)
# the figures that split application from MPI: unknown without the MPI layer
SPLIT_METRICS = ("alloc_app_blocks", "alloc_mpi_blocks", "alloc_app_bytes", "alloc_mpi_bytes",
                 "heap_app_peak", "heap_mpi_peak", "mpi_rss", "mpi_pss")
NO_LAYER_WARNING = ("recorded without the MPI layer (heapscope record --mpi): nothing "
                    "was attributed to MPI, so the application/MPI split is unknown")
OLD_RECORDER_WARNING = ("recorded by an older heapscope, which did not measure its own memory: "
                        "RSS and PSS include the recorder's tables")
REGION_METRICS = ("alloc_app_bytes", "alloc_mpi_bytes", "alloc_app_blocks", "alloc_mpi_blocks",
                  "heap_peak")


def app_region(path: str) -> str:
    """"solve/[MPI]" -> "solve"; "[MPI]" -> "(none)"."""
    parts = [c for c in path.split("/") if c != MPI_REGION]
    return "/".join(parts) if parts and parts != [TOP] else TOP


def is_mpi_region(path: str) -> bool:
    return MPI_REGION in path.split("/")


@dataclass
class RankSummary:
    path: str
    rank: int
    pid: int
    ppid: int
    host: str
    exe: str
    job_id: str
    start_real_ns: int
    reason: str
    complete: bool
    warnings: List[str]
    metrics: Dict[str, Optional[int]]
    has_snapshot: bool = True     # False: only the timeline (a process killed by SIGKILL)
    # region -> {metric: value} (REGION_METRICS)
    regions: Dict[str, Dict[str, int]] = field(default_factory=dict)
    # analysis.timeline.sample_columns: int64 numpy columns by time, mono_ns, heap,
    # heap_mpi, rss, pss (-1 when not measured)
    timeline: Optional[tuple] = None
    heap_exact: bool = False      # heap peaks from HEAP_PEAK (else from the samples)
    mpi_layer: bool = True        # the MPI layer recorded it (else the MPI split is unknown)
    # a crash, a signal or MPI_Abort (profile.ending): kind, signal, signal_name, error_code
    ending: Optional[Dict[str, object]] = None
    # how its process ended (profile.process_end): how, status, mpi_unfinalized, orphaned
    process_end: Optional[Dict[str, object]] = None
    cmdline: List[str] = field(default_factory=list)


def summarize(p: Profile, has_snapshot: bool = True) -> RankSummary:
    """p: a profile read by read_profile, or with has_snapshot=False by read_timeline
    (no counts: only the timeline's figures are set)."""
    m: Dict[str, Optional[int]] = {k: None for k, _, _ in METRICS}
    regions: Dict[str, Dict[str, int]] = {}
    if has_snapshot:
        _count(p, m, regions)
    columns = _timeline(p, m, regions, has_snapshot)
    warnings = [w for w in p.warnings if has_snapshot or w != NO_SNAPSHOT_WARNING]
    layer = mpi_layer_seen(p)
    if not layer:
        # nothing was attributed to MPI: its share is unknown, not 0 (and the rest is
        # not the application's alone)
        for k in SPLIT_METRICS:
            m[k] = None
        for reg in regions.values():
            for k in REGION_METRICS[:4]:
                reg.pop(k, None)
    return RankSummary(path=p.path, rank=p.rank, pid=p.pid, ppid=p.ppid, host=p.host, exe=p.exe,
                       job_id=p.job_id, start_real_ns=p.start_real_ns,
                       reason=p.snapshot_reason if has_snapshot else NO_SNAPSHOT,
                       complete=p.complete and has_snapshot, warnings=warnings, metrics=m,
                       has_snapshot=has_snapshot, regions=regions, timeline=columns,
                       heap_exact=p.timeline is not None and p.timeline.heap_peak is not None,
                       mpi_layer=layer,
                       ending=_ending(p) if has_snapshot else None,
                       process_end=_process_end(p) if has_snapshot else None,
                       cmdline=list(p.cmdline))


def mpi_layer_seen(p: Profile) -> bool:
    """Whether the MPI layer recorded this process: an "[MPI]" region (an MPI call
    allocated), a measured MPI call (MPI_Init always is, when the timeline is on), or
    heap counted as allocated inside MPI calls."""
    if any(is_mpi_region(r.path) for r in p.regions.values()):
        return True
    tl = p.timeline
    return tl is not None and (tl.calipers_taken > 0
                               or any(is_mpi_region(s.region) or s.kind.startswith("mpi-")
                                      or s.heap_mpi_bytes > 0 for s in tl.samples))


def _ending(p: Profile) -> Optional[Dict[str, object]]:
    e = p.ending
    if e is None:
        return None
    return dict(kind=e.kind, signal=e.signal, signal_name=e.signal_name,
                error_code=e.error_code, text=describe_ending(e))


def _process_end(p: Profile) -> Optional[Dict[str, object]]:
    e = p.process_end
    if e is None:
        return None
    return dict(how=e.how, status=e.status, mpi_unfinalized=e.mpi_unfinalized,
                orphaned=e.orphaned)


KILLED_REASONS = ("sigterm", "sigint")


def rank_fate(r: RankSummary) -> Dict[str, object]:
    """How the rank ended: {"ended": exit|no-finalize|crash|mpi-abort|killed|no-snapshot|
    exec|api, "signal": name or None, "error_code": MPI_Abort's code or None, "status":
    the exit status when seen, "text": one phrase}. no-finalize: it exited after MPI
    calls without reaching MPI_Finalize (a rank whose launcher went away ends so, by the
    MPI library's exit: Open MPI's ranks when mpirun dies of a second SIGINT)."""
    end = r.process_end or {}
    status = end.get("status")
    if not r.has_snapshot:
        return dict(ended="no-snapshot", signal=None, error_code=None, status=None,
                    text="killed, no final snapshot (last timeline data)")
    if r.reason == "exit" and end.get("mpi_unfinalized"):
        call = {"exit-now": "_exit", "quick-exit": "quick_exit"}.get(end.get("how"), "exit")
        return dict(ended="no-finalize", signal=None, error_code=None, status=status,
                    text=f"{call}({status if status is not None else '?'}) before MPI_Finalize"
                         + ("; its launcher had ended" if end.get("orphaned") else ""))
    e = r.ending
    if r.reason == "signal":
        name = e["signal_name"] if e else None
        return dict(ended="killed", signal=name, error_code=None, status=None,
                    text=f"killed: {name or 'a signal'}")
    if r.reason == "crash":
        name = e["signal_name"] if e else None
        return dict(ended="crash", signal=name, error_code=None, status=None,
                    text=f"crashed: {name or 'a fatal signal'}")
    if r.reason == "mpi-abort":
        code = e["error_code"] if e else None
        return dict(ended="mpi-abort", signal=None, error_code=code, status=None,
                    text=f"MPI_Abort({code if code is not None else '?'})")
    if r.reason in KILLED_REASONS:
        name = "SIG" + r.reason[3:].upper()
        return dict(ended="killed", signal=name, error_code=None, status=None, text=f"killed: {name}")
    return dict(ended=r.reason, signal=None, error_code=None, status=status, text=r.reason)


def _count(p: Profile, m: Dict[str, Optional[int]], regions: Dict[str, Dict[str, int]]) -> None:
    """The snapshot's figures: blocks and bytes, application and MPI, per region."""
    per_path: Dict[str, List[int]] = {}       # region path -> [blocks, bytes]
    for (r, size), n in p.size_counts.items():
        acc = per_path.get(r)
        if acc is None:
            acc = per_path[r] = [0, 0]
        acc[0] += n
        acc[1] += n * size
    blocks = {False: 0, True: 0}
    nbytes = {False: 0, True: 0}
    for r, (n, b) in per_path.items():
        mpi = is_mpi_region(r)
        blocks[mpi] += n
        nbytes[mpi] += b
        reg = regions.setdefault(app_region(r), dict.fromkeys(REGION_METRICS[:4], 0))
        reg["alloc_mpi_bytes" if mpi else "alloc_app_bytes"] += b
        reg["alloc_mpi_blocks" if mpi else "alloc_app_blocks"] += n
    m.update(alloc_blocks=blocks[False] + blocks[True], alloc_app_blocks=blocks[False],
             alloc_mpi_blocks=blocks[True], alloc_bytes=nbytes[False] + nbytes[True],
             alloc_app_bytes=nbytes[False], alloc_mpi_bytes=nbytes[True])
    if not p.tracking_deferred and p.tracking is not None:   # an event trace is not replayed here
        m["tracked_peak"] = p.tracking.peak_bytes


def _timeline(p: Profile, m: Dict[str, Optional[int]], regions: Dict[str, Dict[str, int]],
              has_snapshot: bool) -> Optional[tuple]:
    """The timeline's figures (peaks, calipers, per-region heap peaks); its columns."""
    tl = p.timeline
    columns = sample_columns(tl)
    if tl is not None and tl.heap_peak is not None:
        m.update(heap_peak=tl.heap_peak, heap_mpi_peak=tl.heap_peak_mpi,
                 heap_app_peak=tl.heap_peak_app)
    if columns is not None:
        heap = columns[1] >= 0          # -1: heap in use not measured
        if tl.heap_peak is None and heap.any():
            m["heap_peak"] = int(columns[1][heap].max())
            m["heap_mpi_peak"] = int(columns[2][heap].max())
            m["heap_app_peak"] = int(max(0, (columns[1][heap] - columns[2][heap]).max()))
        rss, pss = columns[3][columns[3] >= 0], columns[4][columns[4] >= 0]
        m["rss_peak"] = int(rss.max()) if rss.size else None
        m["pss_peak"] = int(pss.max()) if pss.size else None
        own = columns[5][columns[5] >= 0]
        m["recorder_peak"] = int(own.max()) if own.size else None
        if tl.calipers_taken:
            cal = caliper_figures(tl)
            m["mpi_rss"], m["mpi_pss"] = cal["rss"], cal["pss"]
        peaks: Dict[str, int] = {}
        for s in sorted(tl.samples, key=lambda s: s.mono_ns):
            if s.heap_bytes >= 0 and s.heap_bytes > peaks.get(s.region, -1):
                peaks[s.region] = s.heap_bytes
        for path, peak in peaks.items():
            # without a snapshot the region has no counts (None, not 0)
            reg = regions.setdefault(app_region(path), dict.fromkeys(REGION_METRICS[:4], 0)
                                     if has_snapshot else {})
            reg["heap_peak"] = max(reg.get("heap_peak", 0), peak)
    return columns


def pick_ranks(summaries: Sequence[RankSummary],
               block=None) -> Tuple[List[RankSummary], List[RankSummary], List[str]]:
    """The rank processes of one job, by rank; the other processes (the launcher, a
    rank's pre-exec image or its children); notes on what was set aside. block: the job
    file's rows standing alone (analysis.job_columns.JobBlock: ranks of their own, with
    data, of the job file's job), not returned."""
    ranked, others = [], []
    for s in summaries:
        (ranked if s.rank >= 0 else others).append(s)
    if ranked and not block and not any(_has_data(s) for s in ranked):
        files = [s.path.rsplit("/", 1)[-1] for s in ranked]
        raise HeapscopeError(f"no rank file holds a snapshot or timeline samples: "
                             f"{len(files)} file{'s' if len(files) != 1 else ''} with neither a "
                             f"snapshot nor timeline samples ({', '.join(files[:3])}"
                             f"{', ...' if len(files) > 3 else ''})")
    if not ranked and not block:
        raise HeapscopeError("no MPI rank among these profiles (no rank recorded): use "
                             "`heapscope report --by size` for a single program")
    jobs = sorted({s.job_id for s in ranked if _has_data(s)} | ({block.job.job_id} if block else set()))
    if len(jobs) > 1:
        raise HeapscopeError(f"these profiles are ranks of {len(jobs)} jobs ({', '.join(jobs[:5])}"
                             f"{', ...' if len(jobs) > 5 else ''}): report one job's files, "
                             f"e.g. DIR/heapscope.{jobs[0]}.r*.hsp")
    if len({s.rank for s in ranked}) == len(ranked) and all(s.reason != "exec" for s in ranked):
        return sorted(ranked, key=lambda s: s.rank), others, []   # one file a rank: the usual job
    by_rank: Dict[int, List[RankSummary]] = {}
    for s in ranked:
        by_rank.setdefault(s.rank, []).append(s)
    chosen, notes = [], []
    by_host_pid: Dict[Tuple[str, int], List[RankSummary]] = {}   # (made only when needed)
    if any(len(g) > 1 or g[0].reason == "exec" for g in by_rank.values()):
        for s in summaries:
            by_host_pid.setdefault((s.host, s.pid), []).append(s)
    for rank in sorted(by_rank):
        group = by_rank[rank]
        if len(group) == 1 and group[0].reason != "exec":   # the usual case, and a job file's rows
            chosen.append(group[0])
            continue
        rank_process, rest = choose_rank_process(group, by_host_pid)
        chosen.append(rank_process)
        if rest:
            others.extend(rest)
            notes.append(f"rank {rank}: {len(group)} processes (pids "
                         f"{', '.join(str(s.pid) for s in sorted(group, key=lambda s: s.pid))}); "
                         f"pid {rank_process.pid} is the rank (the others are its children, "
                         f"images before exec, or have fewer allocations)")
    return chosen, others, notes


def _has_data(s: RankSummary) -> bool:
    return s.has_snapshot or s.timeline is not None


def _warnings(ranks: List[RankSummary], excluded: List[RankSummary], total: int) -> List[str]:
    """One line for the ranks without a snapshot, one for the files left out (total:
    ranks with data, the job file's block included)."""
    out = []
    bare = [r.rank for r in ranks if not r.has_snapshot]
    if bare:
        n = len(bare)
        out.append(f"rank{'s' if n != 1 else ''} {', '.join(map(str, bare[:12]))}"
                   f"{', ...' if n > 12 else ''} of {total} ended without a snapshot "
                   f"(SIGKILL: OOM killer, scheduler; or still running): heap, RSS and PSS from "
                   f"{'their' if n != 1 else 'its'} timeline up to the last flush, no allocation "
                   f"counts; statistics are over the ranks that have each figure")
    bare = [r.rank for r in ranks if r.timeline is not None
            and r.metrics.get("rss_peak") is not None and r.metrics.get("recorder_peak") is None]
    if bare:
        n = len(bare)
        out.append(f"rank{'s' if n != 1 else ''} {', '.join(map(str, bare[:12]))}"
                   f"{', ...' if n > 12 else ''} of {total}: {OLD_RECORDER_WARNING}")
    bare = [r.rank for r in ranks if not r.mpi_layer]
    if bare:
        n = len(bare)
        out.append(f"rank{'s' if n != 1 else ''} {', '.join(map(str, bare[:12]))}"
                   f"{', ...' if n > 12 else ''} of {total} {NO_LAYER_WARNING}")
    if excluded:
        n = len(excluded)
        named = [f"rank {s.rank} ({s.path.rsplit('/', 1)[-1]}"
                 + (f": {s.warnings[0]}" if s.warnings else "") + ")" for s in excluded[:4]]
        out.append(f"left out: {n} rank file{'s' if n != 1 else ''} with neither a snapshot nor "
                   f"timeline samples: {', '.join(named)}{', ...' if n > 4 else ''}")
    return out


def _stats(values: List[Tuple[int, RankSummary]]) -> Optional[dict]:
    if not values:
        return None
    lo = min(values, key=lambda vs: (vs[0], vs[1].rank))
    hi = max(values, key=lambda vs: (vs[0], -vs[1].rank))
    return dict(min=lo[0], min_rank=lo[1].rank, min_host=lo[1].host,
                max=hi[0], max_rank=hi[1].rank, max_host=hi[1].host,
                mean=sum(v for v, _ in values) / len(values), ranks=len(values))


def job_file_document(job, hosts: List[dict]) -> dict:
    """What only the job file (profile.job_file.JobFile) holds: its reduction's cost,
    which ranks kept their own file, per application region the blocks and bytes summed
    over the ranks, the stack types that held the ranks' heap peaks
    (analysis.job_peak_stacks); and `hosts`, per host the ranks reported and their
    RSS/PSS peaks summed and at most (job_columns.host_figures)."""
    regions: Dict[str, Dict[str, int]] = {}
    for (path, size), n in job.size_counts.items():
        reg = regions.setdefault(app_region(path), dict.fromkeys(REGION_METRICS[:4], 0))
        mpi = is_mpi_region(path)
        reg["alloc_mpi_bytes" if mpi else "alloc_app_bytes"] += n * size
        reg["alloc_mpi_blocks" if mpi else "alloc_app_blocks"] += n
    return dict(path=job.path, size=job.size, summarized=len(job.rows),
                summary_ms=job.summary_ns / 1e6, reduce_ms=job.reduce_ns / 1e6,
                per_rank=job.per_rank or "default",
                kept=job.rows["rank"][job.rows["kept"] != 0].tolist(), hosts=hosts,
                regions=[dict(region=k, **v) for k, v in
                         sorted(regions.items(), key=lambda kv: -kv[1]["alloc_app_bytes"])],
                sizes=len(job.size_counts), peak_stacks=peak_stacks_document(job))


def job_row_summary(job, rank: int, host: str, pid: int, metrics: Dict[str, Optional[int]],
                    heap_exact: bool = False) -> RankSummary:
    """A job file's row (profile.job_file.JobFile) as a RankSummary: reason "finalize"
    (its figures are those of the dump at MPI_Finalize), no timeline and no regions."""
    metrics = dict(metrics)
    metrics.setdefault("tracked_peak", None)
    metrics.setdefault("recorder_peak", None)
    return RankSummary(path=job.path, rank=rank, pid=pid, ppid=0, host=host, exe=job.exe,
                       job_id=job.job_id, start_real_ns=job.start_real_ns, reason=FINALIZE,
                       complete=True, warnings=[], metrics=metrics, heap_exact=heap_exact)


def rank_row(r: RankSummary, present: Sequence[str]) -> dict:
    """The document's per_rank entry of one rank."""
    return dict(rank=r.rank, host=r.host, pid=r.pid, file=r.path, exe=r.exe,
                reason=r.reason, complete=r.complete, has_snapshot=r.has_snapshot,
                heap_exact=r.heap_exact, mpi_layer=r.mpi_layer,
                warnings=r.warnings, **rank_fate(r),
                **{k: r.metrics[k] for k in present})


def build(summaries: Sequence[RankSummary], timeline_points: int = 200, job=None) -> dict:
    """summaries: the files read (job_loading.load_summaries); job: the job file read
    beside them (job_loading.read_job), or None. The job file's rows stand for the
    ranks without a file among summaries; those meeting no file read stay numpy
    columns throughout (analysis.job_columns), the others become RankSummary objects."""
    from heapscope.analysis import job_columns
    block = None
    if job is not None:
        block, met = job_columns.split_job_rows(job, summaries, job_row_summary)
        summaries = met + list(summaries)
    chosen, others, notes = pick_ranks(summaries, block)
    ranks = [r for r in chosen if _has_data(r)]
    excluded = [r for r in chosen if not _has_data(r)]
    present = [k for k, _, _ in METRICS if any(r.metrics[k] is not None for r in ranks)
               or (block is not None and block.present(k))]
    stats = job_columns.stats(ranks, block, present)
    region_names: List[str] = []
    for r in ranks:
        region_names += [name for name in r.regions if name not in region_names]
    regions = []
    for name in region_names:
        row = dict(region=name)
        for k in REGION_METRICS:
            vals = [(r.regions[name][k], r) for r in ranks
                    if name in r.regions and r.regions[name].get(k) is not None]
            if k == "heap_peak" and not any(r.timeline for r in ranks):
                vals = []
            row[k] = _stats(vals)
        regions.append(row)
    hosts = sorted({r.host for r in ranks} | set(block.hosts() if block is not None else ()))
    exes = {r.exe for r in ranks} | ({job.exe} if block is not None else set())
    # a figure from timeline samples (a lower bound) is marked so: RSS and PSS always,
    # heap peaks when a rank's recorder did not keep them exactly (a file without
    # HEAP_PEAK, a job file's row without its exact bit)
    sampled = {"rss_peak", "pss_peak", "recorder_peak"}
    if any(not r.heap_exact and r.metrics["heap_peak"] is not None for r in ranks) \
            or (block is not None and block.heap_sampled()):
        sampled |= {"heap_peak", "heap_app_peak", "heap_mpi_peak"}
    total = len(ranks) + (len(block) if block is not None else 0)
    first = ranks[0] if ranks and (block is None or ranks[0].rank < block.rank[0]) else None
    return dict(
        format=JOB_FORMAT, version=JOB_VERSION,
        job_id=first.job_id if first is not None else job.job_id, ranks=total, hosts=hosts,
        executables=sorted(exes),
        metrics=[dict(key=k, title=t + (" (sampled)" if k in sampled else ""), unit=u,
                      sampled=k in sampled) for k, t, u in METRICS if k in present],
        per_rank=job_columns.RankRows(
            [rank_row(r, present) for r in ranks], block,
            lambda i: rank_row(block.summary(i, job_row_summary), present)),
        stats=stats,
        regions=regions,
        timeline=job_timelines(ranks, timeline_points),
        others=describe_others(ranks, others, summaries),
        no_snapshot=[r.rank for r in ranks if not r.has_snapshot],
        excluded=[dict(rank=s.rank, host=s.host, pid=s.pid, file=s.path,
                       why=s.warnings[0] if s.warnings else "neither a snapshot nor timeline samples")
                  for s in excluded],
        warnings=_warnings(ranks, excluded, total) + (
            [f"the job file {OLD_RECORDER_WARNING}"] if job is not None and job.recorder is None
            and "rss_peak" in present else [])
        + ([f"{job.path}: {w}" for w in job.warnings] if job is not None else []),
        endings=_endings(ranks, excluded, chosen, max(_launched(others), job.size if job else 0),
                         block),
        notes=notes,
        job_file=job_file_document(job, job_columns.host_figures(ranks, block))
        if job is not None else None)


LAUNCHER_COUNT_OPTIONS = ("-np", "-n", "--np", "--n", "--ntasks")  # (not -c: srun's is CPUs)


def _launched(others: Sequence[RankSummary]) -> int:
    """How many ranks the recorded launcher was asked for (`mpirun -np 4`, `mpiexec -n 2
    a : -n 2 b`, `srun --ntasks=8`), 0 when no launcher's command line says."""
    most = 0
    for s in others:
        if not is_launcher(s.exe) or not s.cmdline:
            continue
        total, words = 0, s.cmdline[1:]
        for i, word in enumerate(words):
            name, _, value = word.partition("=")
            if name in LAUNCHER_COUNT_OPTIONS:
                value = value or (words[i + 1] if i + 1 < len(words) else "")
                total += int(value) if value.isdigit() else 0
        most = max(most, total)
    return most


def _endings(ranks: List[RankSummary], excluded: List[RankSummary],
             chosen: List[RankSummary], launched: int = 0, block=None) -> dict:
    """Which ranks crashed (and of what), called MPI_Abort (with which code), were
    killed (by the launcher or a scheduler: a SIGTERM/SIGINT snapshot, or none at all:
    no_snapshot with timeline data, no_data without), and which rank numbers have no
    file (below the highest one recorded, or below the count the launcher's command
    line asked for)."""
    out: Dict[str, list] = dict(crashed=[], aborted=[], killed=[], unfinalized=[], no_snapshot=[],
                                no_data=sorted(r.rank for r in excluded), missing=[])
    for r in ranks:
        fate = rank_fate(r)
        if fate["ended"] == "crash":
            out["crashed"].append(dict(rank=r.rank, signal=fate["signal"]))
        elif fate["ended"] == "mpi-abort":
            out["aborted"].append(dict(rank=r.rank, error_code=fate["error_code"]))
        elif fate["ended"] == "killed":
            out["killed"].append(dict(rank=r.rank, signal=fate["signal"]))
        elif fate["ended"] == "no-finalize":
            out["unfinalized"].append(dict(rank=r.rank, status=fate["status"],
                                           orphaned=bool(r.process_end["orphaned"]),
                                           text=fate["text"]))
        elif fate["ended"] == "no-snapshot":
            out["no_snapshot"].append(r.rank)
    from heapscope.analysis.job_columns import missing
    seen = [r.rank for r in chosen]
    out["missing_count"] = 0
    if seen or block is not None:   # (the job file's rows standing alone: their ranks by columns)
        out["missing"], out["missing_count"] = missing(seen, block, launched)
    return out
