"""Read a job file (heapscope.<job>.job.hsj): one MPI job's rank summaries, reduced
inside the job at MPI_Finalize and written by rank 0 (the recorder's output/job_file.c;
layouts: the format table's chunks 40..46).

It holds the counts per (region path, size) and per (region path, API) summed over the
ranks, one fixed row per rank (allocated blocks and bytes, application and MPI; the
heap, RSS and PSS peaks over the rank's timeline samples up to MPI_Finalize; the
calipers' figures; whether the rank kept its own file) and per host the ranks and the
sum and maximum of their RSS and PSS peaks; with --track, the stack types that held the
ranks' heap peaks (profile/job_peak_stacks.py); rank 0's MPI library and command line
(profile/mpi_library.py). From recorders that measure their own memory (JOB_RECORDER),
each rank's recorder peak, and its RSS/PSS peaks are the program's, net of it; per
host, the recorder peaks' sum and maximum. With --access, the sampled blocks' use per
(region path, size) and per rank (profile/access.py).

The rank rows are kept as they are in the file, one numpy structured array
(JobFile.rows, RANK_DTYPE: the JOB_RANKS row), so that a job of 10^5 ranks is never
10^5 Python objects unless asked: rank_columns() gives each figure as a column with
a mask of the ranks that have it; JobFile.ranks builds the JobRank objects on first use.

Read as strictly as a profile: the chunks come in the writer's order (JOB, JOB_REGIONS,
JOB_SIZE_COUNTS*, JOB_API_COUNTS*, JOB_RANKS*, JOB_HOSTS, JOB_PEAK_STACKS,
JOB_RECORDER*, JOB_MPI_LIBRARY, JOB_COMMAND, JOB_ACCESS, JOB_ACCESS_SIZES*,
JOB_ACCESS_RANKS*; a type this reader does not know is
skipped), and the counts agree with each other before any is
trusted: the rows are JOB's `summarized`, each names a rank below JOB's `ranks`, once;
the hosts are JOB's `hosts`, their ranks add up to the rows, each host's to its rows;
JOB_RECORDER's rows are JOB_RANKS' ranks in their order.
Damage after a whole job (a chunk out of place, such as the file's chunks appended
twice, a corrupt chunk, trailing bytes, a cut inside JOB_PEAK_STACKS) is read up to it
and said in JobFile.warnings; damage before is one HeapscopeError. A header flagging a
failed write is a warning too, as for a profile.
"""
import os
import struct
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Dict, List, Optional, Tuple

from heapscope.errors import HeapscopeError
from heapscope.profile import access
from heapscope.profile import format as fmt
from heapscope.profile.framing import parse, read_file
from heapscope.profile.job_peak_stacks import JobPeakStacks, decode as decode_peak_stacks
from heapscope.profile.layout import Malformed
from heapscope.profile.model import JobAccess
from heapscope.profile.mpi_library import MpiLibrary, decode as decode_mpi_library, decode_command
from heapscope.profile.names import JOB_FILE, is_job_file  # noqa: F401 (names kept here too)

# JOB_RANKS present bits (profile_format.table); HEAP_EXACT: the heap peaks are the
# recorder's exact ones, not the largest samples (older recorders did not say)
PRESENT_COUNTS, PRESENT_HEAP, PRESENT_RSS, PRESENT_PSS, PRESENT_CALIPERS = 1, 2, 4, 8, 16
PRESENT_HEAP_EXACT = 32
_RANK_ROW = struct.Struct("<6I4Q7q")     # one JOB_RANKS row, read without the generic codec


@lru_cache(maxsize=None)
def rank_dtype():
    """The JOB_RANKS row as a numpy record: the whole chunk is one np.frombuffer (numpy is
    imported here, not when a command that never reads a job file starts)."""
    import numpy as np
    dtype = np.dtype([(name, "<u4") for name in ("rank", "host", "pid", "reason", "present", "kept")]
                     + [(name, "<u8") for name in ("alloc_app_blocks", "alloc_mpi_blocks",
                                                   "alloc_app_bytes", "alloc_mpi_bytes")]
                     + [(name, "<i8") for name in ("heap_peak", "heap_app_peak", "heap_mpi_peak",
                                                   "rss_peak", "pss_peak", "mpi_rss", "mpi_pss")])
    assert dtype.itemsize == _RANK_ROW.size
    return dtype
_SIZE_ROW = struct.Struct("<IIQQ")       # JOB_SIZE_COUNTS (SIZE_COUNTS' layout)
_API_ROW = struct.Struct("<IIQ")         # JOB_API_COUNTS (API_COUNTS' layout)
_RECORDER_ROW = struct.Struct("<IIq")    # JOB_RECORDER


@dataclass
class JobRank:
    rank: int
    host: str
    pid: int
    reason: str            # of the snapshot summarized: "api" (the dump at MPI_Finalize)
    kept: bool             # the rank kept its own profile file
    metrics: Dict[str, Optional[int]]   # analysis.job.METRICS keys; None: not measured
    heap_exact: bool = False            # heap peaks exact (else the largest samples)


@dataclass
class JobFile:
    path: str
    job_id: str
    size: int                          # ranks in MPI_COMM_WORLD
    start_real_ns: int
    summary_ns: int
    reduce_ns: int
    per_rank: str                      # record --per-rank as given ("" = the default)
    recorder_version: str
    exe: str                           # rank 0's executable
    regions: List[str] = field(default_factory=list)
    size_counts: Dict[Tuple[str, int], int] = field(default_factory=dict)
    api_counts: Dict[Tuple[str, str], int] = field(default_factory=dict)
    rows: object = field(default=None, compare=False, repr=False)   # JOB_RANKS in file order:
    # a numpy array of rank_dtype() (read_job_file)
    hosts: List[dict] = field(default_factory=list)
    peak_stacks: Optional[JobPeakStacks] = None   # JOB_PEAK_STACKS (None: an older recorder)
    summarized: int = 0                # ranks with a row (JOB)
    warnings: List[str] = field(default_factory=list)   # damage after a whole job, a failed write
    mpi_library: Optional[MpiLibrary] = None      # JOB_MPI_LIBRARY: rank 0's (None: unnamed)
    cmdline: Optional[List[str]] = None           # JOB_COMMAND: rank 0's argv (None: not written)
    # JOB_RECORDER: per row (JOB_RANKS' order) the recorder's own memory peak, -1 where not
    # measured; None: an older recorder (its RSS/PSS peaks include that memory)
    recorder: object = field(default=None, compare=False, repr=False)
    access: Optional[JobAccess] = None            # JOB_ACCESS* (record --access)

    @cached_property
    def ranks(self) -> List[JobRank]:
        """One JobRank per row (built on first use: 10^5 rows take ~0.3 s)."""
        names = [h["host"] for h in self.hosts]
        reasons: Dict[int, str] = {}
        out = []
        own = self.recorder.tolist() if self.recorder is not None else [-1] * len(self.rows)
        for (rank, host, pid, reason, present, kept, *figures), mine in zip(self.rows.tolist(), own):
            name = reasons.get(reason) or reasons.setdefault(reason, fmt.reason_name(reason))
            metrics = _rank_metrics(present, *figures)
            metrics["recorder_peak"] = mine if mine >= 0 else None
            out.append(JobRank(rank, names[host], pid, name, bool(kept), metrics,
                               bool(present & PRESENT_HEAP_EXACT)))
        return out

    def rank_columns(self) -> Dict[str, tuple]:
        """Per analysis.job.METRICS key but tracked_peak (never in a job file): (values
        as int64, which rows have the figure), the rows in file order; the same figures
        as JobRank.metrics. Raises OverflowError for a count past 2^62 (the callers then
        use JobFile.ranks, whose Python ints are exact)."""
        import numpy as np
        r = self.rows
        counts = [r[k] for k in ("alloc_app_blocks", "alloc_mpi_blocks", "alloc_app_bytes",
                                 "alloc_mpi_bytes")]
        if any(c.size and int(c.max()) >= 1 << 62 for c in counts):
            raise OverflowError("a count past 2^62")
        app_blocks, mpi_blocks, app_bytes, mpi_bytes = (c.astype(np.int64) for c in counts)
        present = r["present"]
        own = self.recorder if self.recorder is not None else np.full(len(r), -1, dtype=np.int64)
        have = {bit: (present & bit) != 0 for bit in (PRESENT_COUNTS, PRESENT_HEAP, PRESENT_RSS,
                                                       PRESENT_PSS, PRESENT_CALIPERS)}
        return dict(
            alloc_blocks=(app_blocks + mpi_blocks, have[PRESENT_COUNTS]),
            alloc_app_blocks=(app_blocks, have[PRESENT_COUNTS]),
            alloc_mpi_blocks=(mpi_blocks, have[PRESENT_COUNTS]),
            alloc_bytes=(app_bytes + mpi_bytes, have[PRESENT_COUNTS]),
            alloc_app_bytes=(app_bytes, have[PRESENT_COUNTS]),
            alloc_mpi_bytes=(mpi_bytes, have[PRESENT_COUNTS]),
            heap_peak=(r["heap_peak"], have[PRESENT_HEAP]),
            heap_app_peak=(r["heap_app_peak"], have[PRESENT_HEAP]),
            heap_mpi_peak=(r["heap_mpi_peak"], have[PRESENT_HEAP]),
            rss_peak=(r["rss_peak"], have[PRESENT_RSS]),
            pss_peak=(r["pss_peak"], have[PRESENT_PSS]),
            recorder_peak=(own, own >= 0),
            # -1: the calipers measured none (PSS without smaps_rollup): unknown, not 0
            mpi_rss=(r["mpi_rss"], have[PRESENT_CALIPERS] & (r["mpi_rss"] >= 0)),
            mpi_pss=(r["mpi_pss"], have[PRESENT_CALIPERS] & (r["mpi_pss"] >= 0)))


_ALL = PRESENT_COUNTS | PRESENT_HEAP | PRESENT_RSS | PRESENT_PSS | PRESENT_CALIPERS


def _rank_metrics(present, app_blocks, mpi_blocks, app_bytes, mpi_bytes, heap, heap_app,
                  heap_mpi, rss, pss, mpi_rss, mpi_pss) -> Dict[str, Optional[int]]:
    if present & _ALL == _ALL and mpi_rss >= 0 and mpi_pss >= 0:   # the usual row
        return dict(alloc_blocks=app_blocks + mpi_blocks, alloc_app_blocks=app_blocks,
                    alloc_mpi_blocks=mpi_blocks, alloc_bytes=app_bytes + mpi_bytes,
                    alloc_app_bytes=app_bytes, alloc_mpi_bytes=mpi_bytes, heap_peak=heap,
                    heap_app_peak=heap_app, heap_mpi_peak=heap_mpi, rss_peak=rss, pss_peak=pss,
                    mpi_rss=mpi_rss, mpi_pss=mpi_pss, tracked_peak=None)
    counts = present & PRESENT_COUNTS
    heap_on = present & PRESENT_HEAP
    calipers = present & PRESENT_CALIPERS
    return dict(
        alloc_blocks=app_blocks + mpi_blocks if counts else None,
        alloc_app_blocks=app_blocks if counts else None,
        alloc_mpi_blocks=mpi_blocks if counts else None,
        alloc_bytes=app_bytes + mpi_bytes if counts else None,
        alloc_app_bytes=app_bytes if counts else None,
        alloc_mpi_bytes=mpi_bytes if counts else None,
        heap_peak=heap if heap_on else None,
        heap_app_peak=heap_app if heap_on else None,
        heap_mpi_peak=heap_mpi if heap_on else None,
        rss_peak=rss if present & PRESENT_RSS else None,
        pss_peak=pss if present & PRESENT_PSS else None,
        mpi_rss=mpi_rss if calipers and mpi_rss >= 0 else None,
        mpi_pss=mpi_pss if calipers and mpi_pss >= 0 else None,
        tracked_peak=None)


def _rows(payload, row: struct.Struct, name: str):
    (count,) = struct.unpack_from("<I", payload, 0)
    if 4 + count * row.size != len(payload):
        raise Malformed(f"{count} rows of {row.size} bytes in a {len(payload)}-byte {name} payload")
    return row.iter_unpack(payload[4:])


def _rank_rows(payload):
    import numpy as np
    _rows(payload, _RANK_ROW, "JOB_RANKS")     # (checks the length)
    (count,) = struct.unpack_from("<I", payload, 0)
    return np.frombuffer(payload, dtype=rank_dtype(), count=count, offset=4)


# the writer's order: a chunk may follow one of its own stage (the repeated ones) or an
# earlier one; JOB, JOB_REGIONS, JOB_HOSTS, JOB_PEAK_STACKS, JOB_MPI_LIBRARY, JOB_COMMAND
# and JOB_ACCESS come once
_STAGE = {fmt.JOB: 0, fmt.JOB_REGIONS: 1, fmt.JOB_SIZE_COUNTS: 2, fmt.JOB_API_COUNTS: 3,
          fmt.JOB_RANKS: 4, fmt.JOB_HOSTS: 5, fmt.JOB_PEAK_STACKS: 6, fmt.JOB_RECORDER: 7,
          fmt.JOB_MPI_LIBRARY: 8, fmt.JOB_COMMAND: 9, fmt.JOB_ACCESS: 10,
          fmt.JOB_ACCESS_SIZES: 11, fmt.JOB_ACCESS_RANKS: 12}
_ONCE = {fmt.JOB, fmt.JOB_REGIONS, fmt.JOB_HOSTS, fmt.JOB_PEAK_STACKS, fmt.JOB_MPI_LIBRARY,
         fmt.JOB_COMMAND, fmt.JOB_ACCESS}


def read_job_file(path) -> JobFile:
    path = str(path)
    frame = parse(read_file(path), path)
    job: Optional[JobFile] = None
    rank_rows, recorder_rows = [], []
    damage = frame.corrupt or (f"cut short at byte {frame.truncated_at}"
                               if frame.truncated_at is not None else "")
    stage, stop_at = -1, None
    try:
        for chunk in frame.chunks:
            t, payload = chunk.type, chunk.payload
            if t not in _STAGE:
                if t in fmt.CHUNK_NAMES:     # a profile's chunk: not a job file's
                    damage = f"{fmt.chunk_name(t)} chunk at byte {chunk.offset} in a job file"
                    stop_at = chunk.offset
                    break
                continue                     # a later version's chunk: skipped
            if _STAGE[t] < stage or (_STAGE[t] == stage and t in _ONCE):
                damage = (f"{fmt.chunk_name(t)} chunk at byte {chunk.offset} is out of place "
                          f"(after {fmt.chunk_name(_last_of(stage))}: the file's chunks written twice?)")
                stop_at = chunk.offset
                break
            stage = _STAGE[t]
            if t == fmt.JOB:
                r = fmt.CODECS[t].decode(payload)
                job = JobFile(path=path, job_id=r.job_id, size=r.ranks,
                              start_real_ns=frame.start_real_ns, summary_ns=r.summary_ns,
                              reduce_ns=r.reduce_ns, per_rank=r.per_rank,
                              recorder_version=r.recorder_version, exe=r.exe,
                              summarized=r.summarized)
                host_count = r.hosts
            elif job is None:
                raise Malformed(f"{fmt.chunk_name(t)} chunk at byte {chunk.offset} before the JOB chunk")
            elif t == fmt.JOB_REGIONS:
                job.regions = [r.path for r in fmt.CODECS[t].decode(payload).regions]
            elif t == fmt.JOB_SIZE_COUNTS:
                for region, _, size, count in _rows(payload, _SIZE_ROW, "JOB_SIZE_COUNTS"):
                    key = (_region(job, region), size)
                    if key in job.size_counts:     # (the job's cells are unique: a chunk twice)
                        raise Malformed(f"size {size} of region {key[0]!r} counted twice")
                    job.size_counts[key] = count
            elif t == fmt.JOB_API_COUNTS:
                for region, api, calls in _rows(payload, _API_ROW, "JOB_API_COUNTS"):
                    if not 0 <= api < len(fmt.API_NAMES) or not fmt.API_NAMES[api]:
                        raise Malformed(f"unknown API id {api}")
                    key = (_region(job, region), fmt.api_name(api))
                    if key in job.api_counts:
                        raise Malformed(f"{key[1]} calls of region {key[0]!r} counted twice")
                    job.api_counts[key] = calls
            elif t == fmt.JOB_RANKS:
                rank_rows.append(_rank_rows(payload))
            elif t == fmt.JOB_HOSTS:
                job.hosts = [dict(host=h.name, ranks=h.ranks,
                                  rss_sum=h.rss_sum if h.rss_max >= 0 else None,
                                  rss_max=h.rss_max if h.rss_max >= 0 else None,
                                  pss_sum=h.pss_sum if h.pss_max >= 0 else None,
                                  pss_max=h.pss_max if h.pss_max >= 0 else None)
                             for h in fmt.CODECS[t].decode(payload).hosts]
            elif t == fmt.JOB_PEAK_STACKS:
                job.peak_stacks = decode_peak_stacks(payload)
            elif t == fmt.JOB_RECORDER:
                recorder_rows += list(_rows(payload, _RECORDER_ROW, "JOB_RECORDER"))
            elif t == fmt.JOB_MPI_LIBRARY:
                job.mpi_library = decode_mpi_library(payload)
            elif t == fmt.JOB_COMMAND:
                job.cmdline = decode_command(payload)
            elif t == fmt.JOB_ACCESS:                       # record --access
                job.access = access.job_summary(payload)
            elif t in (fmt.JOB_ACCESS_SIZES, fmt.JOB_ACCESS_RANKS):
                if job.access is None:
                    raise Malformed(f"{fmt.chunk_name(t)} chunk at byte {chunk.offset} before JOB_ACCESS")
                (access.job_sizes if t == fmt.JOB_ACCESS_SIZES else access.job_ranks)(job.access, payload)
    except (Malformed, IndexError, struct.error) as exc:
        raise HeapscopeError(f"{path}: malformed job file: {exc}") from None
    if job is None:
        if damage:
            raise HeapscopeError(f"{path}: {damage}; no job before it")
        raise HeapscopeError(f"{path}: not a job file (no JOB chunk)")
    if stage < _STAGE[fmt.JOB_HOSTS]:
        why = damage or "it ends before its JOB_HOSTS chunk"
        raise HeapscopeError(f"{path}: job file incomplete: {why}")
    import numpy as np
    job.rows = np.concatenate(rank_rows) if len(rank_rows) > 1 else \
        rank_rows[0] if rank_rows else np.zeros(0, rank_dtype())
    _check_counts(job, host_count, path)
    recorder_cut = _read_recorder(job, recorder_rows, bool(damage), path)
    if frame.header.write_failed:
        job.warnings.append(frame.header.write_failure())
    if frame.header.unknown_flags():
        job.warnings.append(frame.header.unknown_flags())
    if damage:
        end = stop_at if stop_at is not None else frame.end
        job.warnings.append(f"{damage}: the job file is read up to byte {end}"
                            + ("" if job.peak_stacks is not None or stage < _STAGE[fmt.JOB_HOSTS]
                               else ", without its peak stack types")
                            + (f", without the recorder's own memory of {recorder_cut} "
                               f"rank{'s' if recorder_cut != 1 else ''}" if recorder_cut else ""))
    return job


def _read_recorder(job: JobFile, rows: list, damaged: bool, path: str) -> int:
    """JOB_RECORDER's peaks into job.recorder and the hosts' sums; returns how many ranks
    a damaged file cut it short of (their peaks unknown: -1)."""
    import numpy as np
    if not rows:
        return 0
    ranks = [rank for rank, _, _ in rows]
    want = job.rows["rank"].tolist()
    cut = len(want) - len(ranks) if damaged and ranks == want[:len(ranks)] else 0
    if ranks != want[:len(want) - cut]:
        raise HeapscopeError(f"{path}: malformed job file: JOB_RECORDER's {len(ranks)} ranks are "
                             f"not JOB_RANKS' {len(want)}")
    job.recorder = np.array([peak for _, _, peak in rows] + [-1] * cut, dtype=np.int64)
    if (job.recorder < -1).any():
        raise HeapscopeError(f"{path}: malformed job file: a negative recorder peak")
    _host_recorder(job)
    return cut


def _host_recorder(job: JobFile) -> None:
    """Per host: the sum and the largest of its ranks' recorder peaks (None: none has it)."""
    import numpy as np
    have = job.recorder >= 0
    host = job.rows["host"][have].astype(np.int64)
    n = len(job.hosts)
    total = np.zeros(n, dtype=np.int64)
    top = np.full(n, -1, dtype=np.int64)
    np.add.at(total, host, job.recorder[have])
    np.maximum.at(top, host, job.recorder[have])
    for h, s, m in zip(job.hosts, total.tolist(), top.tolist()):
        h["recorder_sum"] = s if m >= 0 else None
        h["recorder_max"] = m if m >= 0 else None


def _last_of(stage: int) -> int:
    return next(t for t, s in _STAGE.items() if s == stage)


def _region(job: JobFile, index: int) -> str:
    if index >= len(job.regions):
        raise Malformed(f"counts in region {index} of {len(job.regions)}")
    return job.regions[index]


def _check_counts(job: JobFile, host_count: int, path: str) -> None:
    """The counts of JOB, JOB_RANKS and JOB_HOSTS agree (before any figure is used)."""
    import numpy as np
    rows = job.rows
    bad = ""
    if len(rows) != job.summarized:
        bad = f"{len(rows)} rank rows, JOB says {job.summarized}"
    elif len(rows) > job.size:
        bad = f"{len(rows)} rank rows in a job of {job.size} ranks"
    elif len(job.hosts) != host_count:
        bad = f"{len(job.hosts)} hosts, JOB says {host_count}"
    elif len(rows):
        ranks = rows["rank"]
        if int(ranks.max()) >= job.size:
            bad = f"rank {int(ranks.max())} in a job of {job.size} ranks"
        elif np.unique(ranks).size != len(rows):
            bad = "a rank with two rows"
        elif int(rows["host"].max()) >= len(job.hosts):
            row = rows[int(np.argmax(rows["host"]))]
            bad = f"rank {row['rank']} on host {row['host']} of {len(job.hosts)}"
    if not bad and job.hosts:
        per_host = np.bincount(rows["host"].astype(np.int64), minlength=len(job.hosts)) \
            if len(rows) else np.zeros(len(job.hosts), dtype=np.int64)
        listed = [h["ranks"] for h in job.hosts]
        if per_host.tolist() != listed:
            bad = (f"the hosts list {sum(listed)} ranks ({', '.join(map(str, listed[:4]))}"
                   f"{', ...' if len(listed) > 4 else ''}), the rows {len(rows)}")
    if bad:
        raise HeapscopeError(f"{path}: malformed job file: {bad}")
