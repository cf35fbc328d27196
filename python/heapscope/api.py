"""The Python API, for notebooks and scripts: `heapscope.open(path)`.

    import heapscope
    rec = heapscope.open("run/")             # a file, a directory, or a job's directory
    rec.sizes()                              # allocations per (process, region, size)
    rec.stacks(size="40")                    # symbolized stack trace types
    rec.lifetimes()                          # record --track / --trace
    rec.timeline()                           # heap, RSS, PSS samples

Each table is a pandas DataFrame when pandas is installed (`pip install heapscope[pandas]`),
else a list of dicts with the same columns (`as_frame=False` asks for the list anyway).
A thin facade: reading is the CLI's (analysis.loading.read, profile/), the figures
are the analyses' (analysis/); nothing here computes a figure of its own. As on the
command line: columns are named as the JSON outputs name the same fields, what was not
measured is None (a process outside MPI has rank None; in a DataFrame, <NA>), and MPI
launchers and their daemons are left out of the tables (launchers=True keeps them).
Errors are HeapscopeError, one line, as in the CLI. Layout of each table:
docs/python-api.md.
"""
import importlib
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from heapscope.analysis import histogram, job
from heapscope.analysis.job_loading import is_job, load_summaries
from heapscope.analysis.leaks import build_leaks
from heapscope.analysis.loading import left_out_lines, read, reader_warnings, weighted_stacks
from heapscope.analysis.peak import build_peaks
from heapscope.analysis.processes import describe, leave_out_launchers
from heapscope.analysis.selection import SizeSet, check_region, region_matches
from heapscope.analysis.tracked import load_tracked, tracking_settings
from heapscope.errors import HeapscopeError, NoSnapshotError
from heapscope.profile import profile_files, read_profile
from heapscope.profile.model import Profile
from heapscope.symbolize import Symbolizer

Table = Union["pandas.DataFrame", List[Dict[str, Any]]]  # noqa: F821 (pandas is optional)

# as `heapscope report --format json` describes a process (analysis.processes.describe)
PROCESS_FIELDS = ("file", "pid", "ppid", "rank", "host", "exe", "cmdline", "job_id",
                  "snapshot", "reason", "complete", "threads", "lost_stacks")
PROCESS_COLUMNS = ("process",) + PROCESS_FIELDS + ("tracking", "timeline")
SIZE_COLUMNS = ("process", "pid", "rank", "region", "size", "count", "bytes")
REGION_COLUMNS = ("process", "pid", "rank", "region", "count", "bytes", "distinct_sizes")
STACK_COLUMNS = ("region", "size", "count", "bytes", "function", "file", "line", "frames")
LIFETIME_COLUMNS = ("region", "size", "allocs", "frees", "temporaries", "live_at_peak",
                    "live_at_peak_bytes", "live_at_end", "live_at_end_bytes",
                    "time_median_ns", "time_p90_ns", "function", "file", "line", "frames")
TIMELINE_COLUMNS = ("process", "pid", "rank", "mono_ns", "time_s", "kind", "region", "label",
                    "heap_bytes", "heap_mpi_bytes", "rss_bytes", "pss_bytes", "recorder_bytes")


def pandas_module():
    """pandas, or None when it is not installed."""
    try:
        return importlib.import_module("pandas")
    except ImportError:
        return None


def table(rows: List[Dict[str, Any]], columns: Sequence[str], as_frame: Optional[bool] = None) -> Table:
    """rows as a DataFrame (pandas installed and as_frame not False) or as the list. An
    integer column with None in it (rank outside MPI, a figure not measured) is pandas'
    nullable Int64: <NA> there, never a float NaN or -1."""
    if as_frame is False:
        return rows
    pd = pandas_module()
    if pd is None:
        if as_frame:
            raise HeapscopeError("as_frame=True needs pandas: pip install heapscope[pandas]")
        return rows
    data = {}
    for c in columns:
        values = [r.get(c) for r in rows]
        known = [v for v in values if v is not None]
        nullable_int = len(known) < len(values) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in known)
        data[c] = pd.array(values, dtype="Int64") if nullable_int else values
    return pd.DataFrame(data, columns=list(columns))


def open(path: Union[str, "PathLike", Iterable], launchers: bool = False) -> "Recording":   # noqa: A001
    """The recording at `path`: a profile file, a directory of them (one run, or an MPI
    job's rank files), or a list of such paths. A file that cannot be read (no complete
    snapshot: a process killed; damaged) is left out of the tables and named in
    `warnings` (only when none can be read is it an error); in a job, job() and
    ranks() still use a killed rank's timeline, as the job report does. MPI launchers
    and daemons (mpirun, orted, hydra_pmi_proxy ...) are left out of the tables, as the
    reports leave them out, and said so in `notes`; launchers=True keeps them (the
    reports' --launchers)."""
    paths = [path] if isinstance(path, (str, bytes)) or hasattr(path, "__fspath__") else list(path)
    paths = [str(p) for p in paths]
    if not is_job(paths):
        left_out: list = []       # files that cannot be read: named in `warnings`
        profiles = read(paths, left_out)
        return Recording(paths, profiles, left_out_lines(left_out), launchers=launchers)
    profiles, left_out = [], []
    for f in profile_files(paths):
        try:
            profiles.append(read_profile(f))
        except NoSnapshotError as exc:
            left_out.append(f"{exc} (left out of the tables; job() and ranks() use its timeline)")
    return Recording(paths, profiles, left_out, launchers=launchers)


class Recording:
    """The profiles of one recording and the tables drawn from them."""

    def __init__(self, paths: List[str], profiles: List[Profile], left_out: Sequence[str] = (),
                 launchers: bool = False):
        self.paths = paths
        self.profiles, note = leave_out_launchers(profiles, include=launchers)
        self._left_out = list(left_out)
        self._launcher_notes = [note] if note else []
        self._symbolizer = Symbolizer()

    def __repr__(self) -> str:
        return f"<heapscope.Recording {len(self.profiles)} process(es) from {', '.join(self.paths)}>"

    @property
    def is_job(self) -> bool:
        """The files are an MPI job's ranks (named so by `record`)."""
        return is_job(self.paths)

    @property
    def warnings(self) -> List[str]:
        """What the reader noticed (cut-short files, unknown chunks, ranks left out), one
        line each."""
        return self._left_out + reader_warnings(self.profiles)

    @property
    def notes(self) -> List[str]:
        """What was left out (MPI launchers and daemons) and the symbolizer's notes
        (missing debug information) so far."""
        return self._launcher_notes + list(self._symbolizer.notes)

    def processes(self, as_frame: Optional[bool] = None) -> Table:
        """One row per process: the JSON outputs' description of it (file, pid, ppid,
        rank, host, exe, cmdline, snapshot and its reason, ...), whether it was tracked
        (`track`, `trace`, None) and has timeline samples."""
        rows = []
        for i, p in enumerate(self.profiles):
            d = describe(p)
            rows.append(dict(process=i, **{k: d[k] for k in PROCESS_FIELDS},
                             tracking=None if not _has_tracking(p) else
                             ("trace" if p.tracking_deferred else p.tracking.source),
                             timeline=p.timeline is not None and bool(p.timeline.samples)))
        return table(rows, PROCESS_COLUMNS, as_frame)

    def sizes(self, size: Optional[str] = None, region: Optional[str] = None,
              as_frame: Optional[bool] = None) -> Table:
        """Allocations per process, region and exact size (the counts, exact)."""
        sizes = SizeSet(size)
        self._check_region(region)
        rows = [dict(process=i, pid=p.pid, rank=_rank(p), region=r, size=s, count=n, bytes=s * n)
                for i, p in enumerate(self.profiles)
                for (r, s), n in sorted(p.size_counts.items())
                if s in sizes and region_matches(r, region)]
        return table(rows, SIZE_COLUMNS, as_frame)

    def regions(self, as_frame: Optional[bool] = None) -> Table:
        """Per process and region: allocations (count), bytes asked for, distinct sizes."""
        rows = []
        for i, p in enumerate(self.profiles):
            acc: Dict[str, list] = {r: [0, 0, 0] for r in p.region_paths}
            for (r, s), n in p.size_counts.items():
                a = acc.setdefault(r, [0, 0, 0])
                a[0] += n
                a[1] += s * n
                a[2] += 1
            rows += [dict(process=i, pid=p.pid, rank=_rank(p), region=r, count=a[0],
                          bytes=a[1], distinct_sizes=a[2]) for r, a in acc.items()]
        return table(rows, REGION_COLUMNS, as_frame)

    def stacks(self, size: Optional[str] = "all", region: Optional[str] = None,
               merge: bool = True, as_frame: Optional[bool] = None) -> Table:
        """Symbolized stack trace types of the sizes and regions chosen (as `heapscope
        stacks`): frames innermost first, as text; `function`, `file` and `line` of the
        innermost frame (None where unknown). merge=False keeps the processes apart."""
        stacks = weighted_stacks(self.profiles, SizeSet(size), region, merge=merge,
                                 symbolizer=self._symbolizer)
        stacks.sort(key=lambda s: (-s.count, s.size, s.region, s.key))
        rows = [dict(region=s.region, size=s.size, count=s.count, bytes=s.bytes,
                     **_innermost(s.frames), frames=[f.text() for f in s.frames])
                for s in stacks]
        return table(rows, STACK_COLUMNS, as_frame)

    def lifetimes(self, size: Optional[str] = None, region: Optional[str] = None,
                  as_frame: Optional[bool] = None) -> Table:
        """Per tracked stack trace type (or size tracked without stacks): what happened
        to its blocks (record --track, or --trace replayed); the lifetime medians are
        the lower edges of the log2 bins holding them (analysis.histogram)."""
        profiles, entries, _ = load_tracked(self.profiles, size, region)
        rows = []
        for e in sorted(entries, key=lambda e: (-e.life.allocs, e.size, e.region, e.key)):
            life = e.life
            rows.append(dict(
                region=e.region, size=e.size, allocs=life.allocs, frees=life.frees,
                temporaries=life.temporaries, live_at_peak=life.live_at_peak,
                live_at_peak_bytes=life.live_at_peak_bytes, live_at_end=life.live_at_end,
                live_at_end_bytes=life.live_at_end_bytes,
                time_median_ns=_bin_low(histogram.percentile_bin(life.time_hist, 50)),
                time_p90_ns=_bin_low(histogram.percentile_bin(life.time_hist, 90)),
                **_innermost(e.frames), frames=[f.text() for f in e.frames]))
        return table(rows, LIFETIME_COLUMNS, as_frame)

    def tracking(self) -> dict:
        """The tracking settings and figures every tracking report carries (source,
        temporary bounds, untracked blocks and bytes, whether the peak is a lower bound)."""
        profiles, _, _ = load_tracked(self.profiles, None, None, per_process=True)
        return tracking_settings(profiles)

    def peak(self, size: Optional[str] = None, region: Optional[str] = None, top: int = 10) -> dict:
        """The `heapscope peak` document (docs/analysis-formats.md)."""
        profiles, _, _ = load_tracked(self.profiles, None, None, per_process=True)
        return build_peaks(profiles, size, region, self._symbolizer, top=top)

    def leaks(self, size: Optional[str] = None, region: Optional[str] = None, top: int = 0) -> dict:
        """The `heapscope leaks` document, without suppressions."""
        _, entries, _ = load_tracked(self.profiles, size, region)
        return build_leaks(entries, [], top=top)

    def timeline(self, as_frame: Optional[bool] = None) -> Table:
        """Every timeline sample of every process: heap in use, its MPI part, RSS and
        PSS of the program (net of the recorder's own memory), the recorder's own memory
        (None: not measured; in files of older recorders, RSS and PSS include it), the
        time since the process started (mono_ns, and in seconds)."""
        rows = []
        for i, p in enumerate(self.profiles):
            if p.timeline is None:
                continue
            rows += [dict(process=i, pid=p.pid, rank=_rank(p), mono_ns=s.mono_ns,
                          time_s=s.mono_ns / 1e9, kind=s.kind, region=s.region, label=s.label,
                          heap_bytes=_measured(s.heap_bytes),
                          heap_mpi_bytes=_measured(s.heap_mpi_bytes),
                          rss_bytes=_measured(s.rss_bytes), pss_bytes=_measured(s.pss_bytes),
                          recorder_bytes=_measured(s.recorder_bytes))
                     for s in p.timeline.samples]
        return table(rows, TIMELINE_COLUMNS, as_frame)

    def job(self, points: int = 200) -> dict:
        """The job report's document (`heapscope report DIR --by rank`): per-rank peaks,
        min/max/mean over ranks, regions, timelines on `points` time bins."""
        return job.build(load_summaries(self.paths), timeline_points=points)

    def ranks(self, as_frame: Optional[bool] = None) -> Table:
        """One row per rank of a job: the job report's per-rank figures (keys: job()'s
        `metrics`; None where not measured)."""
        doc = self.job(points=1)
        keys = [m["key"] for m in doc["metrics"]]
        rows = [{k: r.get(k) for k in ("rank", "host", "pid", "reason", "complete", *keys)}
                for r in doc["per_rank"]]
        return table(rows, ("rank", "host", "pid", "reason", "complete", *keys), as_frame)

    def _check_region(self, region: Optional[str]) -> None:
        check_region(sorted({r for p in self.profiles for r in p.region_paths}), region)


def _rank(p: Profile) -> Optional[int]:
    """The MPI rank, None outside MPI (the JSON outputs' null)."""
    return p.rank if p.rank >= 0 else None


def _measured(value: int) -> Optional[int]:
    """A timeline figure, None where it was not measured (stored as -1)."""
    return None if value < 0 else value


def _innermost(frames) -> dict:
    """function, file and line of a path's innermost frame (None where unknown)."""
    if not frames:
        return dict(function=None, file=None, line=None)
    f = frames[0].to_json()
    return dict(function=f["function"], file=f["file"], line=f["line"])


def _has_tracking(p: Profile) -> bool:
    return p.tracking_deferred or p.tracking is not None


def _bin_low(b: Optional[int]) -> Optional[int]:
    return None if b is None else histogram.bin_range(b)[0]
