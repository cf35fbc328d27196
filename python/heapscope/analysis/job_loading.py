"""Read a job's profile files into RankSummary objects, in parallel when there are many.

Each worker reads whole files and hands back only the small summary (counts per
region, the timeline columns), so a job of thousands of ranks is not held in memory
as full profiles. Errors stay one-line HeapscopeErrors naming the file.

A job file (heapscope.<job>.job.hsj, reduced inside the job at MPI_Finalize) is read
too when one is named or in a directory named (read_job): its rows stand for the ranks
whose own file was not kept (record --per-rank; no timelines, no regions per rank) and
are added by analysis.job.build(summaries, job=...), as columns; the files present
(kept ranks, ranks that never reached MPI_Finalize, the launcher) are read as always
(load_summaries). Several job files in one place are an error (one run per DIR).

Nothing recorded is dropped: a file without a complete snapshot (a rank killed by
SIGKILL) is summarized from its timeline (has_snapshot=False); an empty file (killed
between opening its file and writing the header) or a damaged one (a bad header, a
corrupt chunk before any snapshot) from its name, with no figures and the reason: the
job report lists it as left out, and reads the others.
"""
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Iterable, List, Optional, Sequence

from heapscope.analysis.job import METRICS, NO_SNAPSHOT, RankSummary, summarize
from heapscope.errors import HeapscopeError, NoSnapshotError
from heapscope.profile import profile_files, read_profile
from heapscope.profile.job_file import JOB_FILE, JobFile, read_job_file
from heapscope.profile.names import RANK_FILE
from heapscope.profile.timeline import read_timeline
from heapscope.profile.model import Profile

PARALLEL_FROM = 64      # files; below this a pool costs more than it saves
CHUNK = 32              # files per task sent to a worker


def job_files(paths: Iterable) -> List[str]:
    """The job files named, or in the directories named."""
    out = []
    for arg in map(str, paths):
        if os.path.isdir(arg):
            out += sorted(os.path.join(arg, n) for n in os.listdir(arg) if JOB_FILE.match(n))
        elif JOB_FILE.match(os.path.basename(arg)):
            out.append(arg)
    return out


def _other_files(paths: Iterable) -> List[str]:
    """profile_files, except job files; [] when the job file was all there is."""
    paths = list(paths)
    try:
        return profile_files([p for p in map(str, paths) if not JOB_FILE.match(os.path.basename(p))])
    except HeapscopeError:
        if job_files(paths):
            return []
        raise


def is_job(paths: Iterable) -> bool:
    """Whether the files named (a directory: its *.hsp files) include a job file or files
    record named after MPI ranks."""
    return bool(job_files(paths)) or any(RANK_FILE.match(os.path.basename(f))
                                         for f in profile_files(paths))


def read_job(paths: Iterable) -> Optional[JobFile]:
    """The one job file among paths, or None."""
    found = job_files(paths)
    if len(found) > 1:
        raise HeapscopeError(f"{len(found)} job files ({', '.join(map(os.path.basename, found[:3]))}"
                             f"{', ...' if len(found) > 3 else ''}): report one run's files")
    return read_job_file(found[0]) if found else None


def summarize_file(path: str) -> RankSummary:
    try:
        empty = os.path.getsize(path) == 0
    except OSError:
        empty = False                # read_profile says what is wrong
    if empty:
        return _unreadable(path, "empty file (the process ended before it wrote anything)")
    try:
        return summarize(read_profile(path, modules=False))
    except NoSnapshotError:
        try:
            return summarize(read_timeline(path), has_snapshot=False)
        except HeapscopeError as exc:
            return _unreadable(path, _why(path, exc))
    except HeapscopeError as exc:
        return _unreadable(path, _why(path, exc))


def _why(path: str, exc: HeapscopeError) -> str:
    text = str(exc)
    return text[len(path) + 2:] if text.startswith(path + ": ") else text


def _unreadable(path: str, why: str) -> RankSummary:
    """A file with no figure to give: known by its name (rank, host, pid), and why."""
    name = RANK_FILE.match(os.path.basename(path))
    job = name["job"] if name and name["job"] != "job" else ""
    return RankSummary(path=path, rank=int(name["rank"]) if name else -1,
                       pid=int(name["pid"]) if name else 0, ppid=0,
                       host=name["host"] if name else "", exe="", job_id=job, start_real_ns=0,
                       reason=NO_SNAPSHOT, complete=False, warnings=[why],
                       metrics={k: None for k, _, _ in METRICS}, has_snapshot=False)


def _summarize_files(files: List[str]):
    out = []
    for f in files:
        try:
            out.append(summarize_file(f))
        except HeapscopeError as exc:
            return str(exc)          # an exception crossing the pool would lose its type
    return out


def load_summaries(paths: Iterable, workers: int = 0, job: Optional[JobFile] = None,
                   loaded: Sequence[Profile] = ()) -> List[RankSummary]:
    """The profile files' summaries. workers: 0 = as many as CPUs when there are
    PARALLEL_FROM files or more, 1 = serial. job: the job file among these paths
    (read_job): it is not read here but by analysis.job.build(..., job=job), whose rows
    stand for the ranks without a file of their own (a rank's own file, where kept, is
    the more complete: its exit snapshot counts what MPI_Finalize itself allocated; its
    timeline). loaded: profiles the caller has read already (by path): summarized as
    they are, not read again."""
    files = profile_files(paths) if job is None else _other_files(paths)
    have = {p.path: p for p in loaded}
    if not have:
        return _load_files(files, workers)
    rest = iter(_load_files([f for f in files if f not in have], workers))
    return [summarize(have[f]) if f in have else next(rest) for f in files]


def _load_files(files: List[str], workers: int) -> List[RankSummary]:
    if workers == 0:
        workers = (os.cpu_count() or 1) if len(files) >= PARALLEL_FROM else 1
    if workers <= 1:
        result = _summarize_files(files)
        if isinstance(result, str):
            raise HeapscopeError(result)
        return result
    chunks = [files[i:i + CHUNK] for i in range(0, len(files), CHUNK)]
    summaries: List[RankSummary] = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for result in pool.map(_summarize_files, chunks):
            if isinstance(result, str):
                raise HeapscopeError(result)
            summaries.extend(result)
    return summaries
