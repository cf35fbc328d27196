"""Read a job's profile files into RankSummary objects, in parallel when there are many.

Each worker reads whole files and hands back only the small summary (counts per
region, the timeline columns), so a job of thousands of ranks is not held in memory
as full profiles. Errors stay one-line HeapscopeErrors naming the file.

Nothing recorded is dropped: a file without a complete snapshot (a rank killed by
SIGKILL) is summarized from its timeline (has_snapshot=False); an empty file (killed
between opening its file and writing the header) from its name, with no figures.
"""
import os
import re
from concurrent.futures import ProcessPoolExecutor
from typing import Iterable, List

from heapscope.analysis.job import METRICS, NO_SNAPSHOT, RankSummary, summarize
from heapscope.errors import HeapscopeError, NoSnapshotError
from heapscope.profile import profile_files, read_profile
from heapscope.profile.timeline import read_timeline

PARALLEL_FROM = 64      # files; below this a pool costs more than it saves
CHUNK = 32              # files per task sent to a worker
# the recorder's name of a rank's file: heapscope.<job>.r<rank>.<host>.<pid>[.<n>].hsp
RANK_FILE = re.compile(r"^heapscope\.(?P<job>.+)\.r(?P<rank>\d+)\.(?P<host>[^.]+)\.(?P<pid>\d+)"
                       r"(?:\.\d+)?\.hsp$")


def is_job(paths: Iterable) -> bool:
    """Whether the files named (a directory: its *.hsp files) include files record named
    after MPI ranks."""
    return any(RANK_FILE.match(os.path.basename(f)) for f in profile_files(paths))


def summarize_file(path: str) -> RankSummary:
    try:
        empty = os.path.getsize(path) == 0
    except OSError:
        empty = False                # read_profile says what is wrong
    if empty:
        return _empty_file(path)
    try:
        return summarize(read_profile(path))
    except NoSnapshotError:
        return summarize(read_timeline(path), has_snapshot=False)


def _empty_file(path: str) -> RankSummary:
    name = RANK_FILE.match(os.path.basename(path))
    job = name["job"] if name and name["job"] != "job" else ""
    return RankSummary(path=path, rank=int(name["rank"]) if name else -1,
                       pid=int(name["pid"]) if name else 0, ppid=0,
                       host=name["host"] if name else "", exe="", job_id=job, start_real_ns=0,
                       reason=NO_SNAPSHOT, complete=False,
                       warnings=["empty file (the process ended before it wrote anything)"],
                       metrics={k: None for k, _, _ in METRICS}, has_snapshot=False)


def _summarize_files(files: List[str]):
    out = []
    for f in files:
        try:
            out.append(summarize_file(f))
        except HeapscopeError as exc:
            return str(exc)          # an exception crossing the pool would lose its type
    return out


def load_summaries(paths: Iterable, workers: int = 0) -> List[RankSummary]:
    """workers: 0 = as many as CPUs when there are PARALLEL_FROM files or more, 1 = serial."""
    files = profile_files(paths)
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
