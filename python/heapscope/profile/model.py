"""What a profile file holds once read: plain data classes, no file access."""
from dataclasses import dataclass, field, fields
from typing import Callable, Dict, List, Optional, Tuple


def maker(cls) -> Callable:
    """make(*values): a frozen dataclass `cls` from every one of its fields in order, equal
    to cls(*values), without the frozen __init__'s object.__setattr__ per field (a
    quarter of the time of reading 56,000 stack types). For classes without
    __post_init__ whose fields are all given."""
    names = tuple(f.name for f in fields(cls))
    new = object.__new__

    def make(*values):
        obj = new(cls)
        obj.__dict__.update(zip(names, values))
        return obj
    return make


@dataclass(frozen=True)
class Module:
    """A loaded object: runtime address = file address + bias."""
    path: str
    bias: int
    build_id: str                         # lowercase hex, "" when the object has none
    ranges: Tuple[Tuple[int, int], ...]   # runtime [lo, hi) of its executable segments

    def contains(self, address: int) -> bool:
        return any(lo <= address < hi for lo, hi in self.ranges)


@dataclass(frozen=True)
class Region:
    id: int
    parent: int    # format.NO_PARENT for region 0
    name: str
    path: str      # "(none)" for region 0, "split" at top level, "split/local" nested


@dataclass(frozen=True)
class StackType:
    """A distinct call path (innermost frame first) of one exact size in one region."""
    region: str              # region path
    size: int
    count: int
    bytes: int
    frames: Tuple[int, ...]  # return addresses; symbolize at address - 1
    samples: int = 0         # sampled stacks (settings["sample_bytes"]): the samples behind
                             # count and bytes, which are then estimates; 0 when exact


@dataclass(frozen=True)
class Ending:
    """A crash, another fatal signal or an MPI_Abort (the ENDING chunk): how the process
    ended, if not by exit."""
    kind: str                # "crash", "signal" or "mpi-abort"
    signal: int              # the signal's number (crash, signal), else 0
    signal_name: str         # "SIGSEGV" (crash, signal), else ""
    si_code: int             # the signal's si_code: > 0 a fault, <= 0 sent by kill/raise/abort
    error_code: int          # MPI_Abort's errorcode (mpi-abort), else 0
    fault_address: int       # si_addr of a fault, else 0


@dataclass(frozen=True)
class ProcessEnd:
    """How the process ended (the PROCESS_END chunk of its final snapshot)."""
    how: str                 # "exit", "exit-now" (_exit), "quick-exit", "last-thread", "signal",
                             # "exec", "mpi-abort" (format table: process_end)
    status: Optional[int]    # the exit status the program gave, None when not seen
    mpi_unfinalized: bool    # the MPI layer saw MPI calls, and no MPI_Finalize
    orphaned: bool           # its parent (a launcher) had ended before it


@dataclass
class Profile:
    path: str
    pid: int = 0
    ppid: int = 0
    rank: int = -1
    host: str = ""
    exe: str = ""
    cmdline: List[str] = field(default_factory=list)
    job_id: str = ""
    recorder_version: str = ""
    start_real_ns: int = 0
    settings: dict = field(default_factory=dict)
    complete: bool = True
    warnings: List[str] = field(default_factory=list)
    snapshot_seq: int = 0
    snapshot_reason: str = ""
    snapshot_mono_ns: int = 0
    modules: List[Module] = field(default_factory=list)
    regions: Dict[int, Region] = field(default_factory=dict)
    size_counts: Dict[Tuple[str, int], int] = field(default_factory=dict)
    api_counts: Dict[Tuple[str, str], int] = field(default_factory=dict)
    # Calls that returned no block, (region path, API name, requested size or None when
    # the recorder did not keep it) -> calls; in no size count (format version 2; in
    # version 1 files failed calls were in size_counts too, and this is empty).
    failed_allocs: Dict[Tuple[str, str, Optional[int]], int] = field(default_factory=dict)
    stack_types: List[StackType] = field(default_factory=list)
    lost_stacks: int = 0
    total_threads: int = 0
    # Chunks of types this reader does not decode (>= 10: later issues), raw payloads
    # from the chosen snapshot; and those found outside any snapshot.
    extra_chunks: Dict[int, List[bytes]] = field(default_factory=dict)
    file_chunks: Dict[int, List[bytes]] = field(default_factory=dict)
    # record --track / --trace; a trace's replay waits for the first read (_DeferredTracking)
    tracking: Optional["Tracking"] = field(default=None, repr=False, compare=False)
    timeline: Optional["Timeline"] = None   # samples written as the run went
    ending: Optional[Ending] = None         # a crash, a signal or MPI_Abort (profile/ending.py)
    process_end: Optional[ProcessEnd] = None   # in a final snapshot (profile/ending.py)
    access: Optional["Access"] = None       # record --access (profile/access.py)

    def defer_tracking(self, loader: Callable[[], Optional["Tracking"]]) -> None:
        """Profile.tracking comes from loader(), called on its first read: reports that do
        not need tracking never replay an event trace."""
        self.__dict__[_DeferredTracking.loader] = loader

    @property
    def tracking_deferred(self) -> bool:
        """Tracking that will be replayed when read (not read yet)."""
        return _DeferredTracking.loader in self.__dict__

    @property
    def region_paths(self) -> List[str]:
        """Region paths in id order (region 0 first)."""
        return [self.regions[i].path for i in sorted(self.regions)]

    @property
    def label(self) -> str:
        """How reports name this process: "pid 1234" or "rank 3 (pid 1234)"."""
        if self.rank >= 0:
            return f"rank {self.rank} (pid {self.pid})"
        return f"pid {self.pid}"


class _DeferredTracking:
    """Profile.tracking: a value, or what Profile.defer_tracking's loader returns when
    first read (then kept)."""
    loader, slot = "_tracking_loader", "_tracking"

    def __get__(self, obj, owner=None):
        if obj is None:
            return None
        loader = obj.__dict__.pop(self.loader, None)
        if loader is not None:
            obj.__dict__[self.slot] = loader()
        return obj.__dict__.get(self.slot)

    def __set__(self, obj, value) -> None:
        obj.__dict__.pop(self.loader, None)
        obj.__dict__[self.slot] = value


Profile.tracking = _DeferredTracking()


# ---- tracking mode (record --track, or replayed from a --trace event stream) ----
# Histogram binning shared by every lifetime histogram: value v falls in bin
# 0 if v == 0, else floor(log2(v)) + 1, capped at LIFETIME_BINS - 1. Lifetimes are
# in nanoseconds (time_hist) and in allocations the allocating thread made between
# the block's allocation and its free (between_hist).
LIFETIME_BINS = 64


EMPTY_HIST = (0,) * LIFETIME_BINS   # the histogram of no block (shared: readers hand this one out)


def lifetime_bin(value: int) -> int:
    return 0 if value <= 0 else min(value.bit_length(), LIFETIME_BINS - 1)


@dataclass(frozen=True)
class Lifetimes:
    """What happened to the blocks of one stack trace type and size."""
    allocs: int                    # blocks allocated
    frees: int                     # of them, freed before the snapshot
    temporaries: int               # freed with <= N allocations in between (and within the time bound)
    time_hist: Tuple[int, ...]     # freed blocks by lifetime in ns (LIFETIME_BINS bins)
    between_hist: Tuple[int, ...]  # freed blocks by allocations in between (LIFETIME_BINS bins)
    live_at_peak: int              # blocks live at the global heap peak
    live_at_peak_bytes: int
    live_at_end: int               # blocks not freed when the snapshot was taken (leaks at exit)
    live_at_end_bytes: int


@dataclass(frozen=True)
class TrackedStack:
    """One stack trace type (region, size, frames) with its lifetimes. frames is ()
    for sizes/regions whose stacks were not captured: then it aggregates per size.
    Sampled stacks (profile/sampling.py): life holds estimates, sampled the figures of
    the sampled blocks behind them."""
    region: str
    size: int
    frames: Tuple[int, ...]
    life: Lifetimes
    sampled: Optional[Lifetimes] = None


@dataclass
class Tracking:
    temporary_max_between: int = 0     # N: at most N other allocations in between
    temporary_max_ns: int = 0          # time bound of a temporary, 0 = none
    peak_bytes: int = 0                # requested bytes live at the global heap peak
    peak_mono_ns: int = 0              # when, ns since process start
    end_bytes: int = 0                 # requested bytes live at the snapshot
    stacks: List[TrackedStack] = field(default_factory=list)
    extra: Dict[int, Tuple[int, int]] = field(default_factory=dict)  # size -> (blocks, usable - requested bytes)
    untracked: int = 0                 # blocks not tracked (table full); counted, never silently dropped
    untracked_bytes: Optional[int] = 0  # their requested bytes; None: not recorded (older recorder)
    table_bytes: int = 0               # memory the recorder mapped for tracking
    source: str = "track"              # "track" (recorder tables) or "trace" (replayed events)

    @property
    def peak_is_lower_bound(self) -> bool:
        """Untracked blocks may have been live at the peak: the true peak is higher or equal."""
        return self.untracked > 0


# ---- memory access (record --access): which pages of the sampled blocks were used ----
ACCESS_BINS = 64    # first-touch histograms, in ns, binned as lifetime_bin


@dataclass(frozen=True)
class AccessRow:
    """The sampled blocks of one stack trace type (frames () : samples without a stack,
    one (region, size)), as the recorder measured them (counts of samples, not
    estimates: analysis/access.py scales them)."""
    region: str
    size: int
    frames: Tuple[int, ...]
    samples: int             # allocations sampled
    measured: int            # of them, blocks whose pages were read
    live: int                # of those, alive at the snapshot (read then)
    touched_bytes: int       # bytes of the measured blocks on pages read or written
    never_touched: int       # measured blocks with no page read or written
    read_first: int          # measured blocks a page of which was read while unwritten
    zeroed: int              # measured blocks zeroed by contract (calloc)
    huge: int                # measured blocks on a huge page (2 MiB granularity)
    after_hist: Tuple[int, ...]   # touched blocks: last seen untouched, ns after allocation
    by_hist: Tuple[int, ...]      # ... first seen touched


@dataclass
class Access:
    mechanism: str           # "pagemap-scan", "pagemap" or "none"
    page_size: int
    poll_ns: int             # a first touch is known to within it
    sample_mean: int
    large_bytes: int         # measured in place from this size on; smaller: pages of their own
    unmeasured: Dict[str, int]   # samples not measured: pool (full), align, other
    pool_bytes: int
    pool_peak_bytes: int
    rows_lost: int           # samples in no row (table full)
    live_unread: int         # live measured blocks left out of this snapshot
    forked_flags: bool       # read-only not told from written for blocks alive at a fork
    rows: List[AccessRow] = field(default_factory=list)


@dataclass
class JobAccess:
    """record --access in a job file: the sampled blocks' figures per (region path, size)
    summed over the ranks, and each rank's own estimates."""
    ranks_measured: int
    mechanism: str
    sample_mean: int         # 0: the ranks sampled with different means
    poll_ns: int
    unmeasured: int
    sizes: Dict[Tuple[str, int], AccessRow] = field(default_factory=dict)
    ranks: List[dict] = field(default_factory=list)


# ---- timeline (heap in use and RSS/PSS over time; MPI calipers) ----
@dataclass(frozen=True)
class Sample:
    mono_ns: int           # ns since process start
    kind: str              # "periodic", "region-begin", "region-end", "mpi-before", "mpi-after", "final"
    region: str            # region path current at the sample
    label: str             # the region name or MPI function for non-periodic samples, else ""
    heap_bytes: int        # heap in use (all)
    heap_mpi_bytes: int    # of it, allocated inside MPI calls (component regions)
    rss_bytes: int         # the program's: the process's (smaps_rollup or statm) net of
    pss_bytes: int         # recorder_bytes when that was measured; -1 when unreadable
    recorder_bytes: int = -1   # the recorder's own resident memory (its tables, rings,
                               # buffers); -1: not measured (files of older recorders,
                               # whose RSS/PSS then include it)


@dataclass
class Timeline:
    interval_ns: int = 0
    heap_measure: str = "usable"     # "usable" (malloc_usable_size) or "requested" (tracking); "none": heap fields -1
    samples: List[Sample] = field(default_factory=list)
    mpi_rss_delta_bytes: int = 0     # calipers: RSS growth summed over MPI calls
    mpi_pss_delta_bytes: int = 0
    calipers_taken: int = 0
    calipers_skipped: int = 0        # MPI calls not measured because of the rate limit
    # HEAP_PEAK: exact peaks of heap in use (every allocation and free, not the samples);
    # None when the recorder did not write them (heap not measured, or an older recorder)
    heap_peak: Optional[int] = None
    heap_peak_mpi: Optional[int] = None
    heap_peak_app: Optional[int] = None

    @property
    def recorder_measured(self) -> bool:
        """Whether the samples carry the recorder's own memory (then RSS/PSS are net of it)."""
        return any(s.recorder_bytes >= 0 for s in self.samples)
