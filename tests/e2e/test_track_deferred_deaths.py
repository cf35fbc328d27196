"""Tracking mode counts a block's death a few frees after its free (src/recorder/track/
deferred.c). The cases where that wait could show, on a program that makes
them happen (tests/programs/trk_deferred.c): the address handed to another thread
before the death is counted, a thread idle with deaths waiting at exit, a region
boundary right after frees."""
from heapscope.profile import read_profile
from heapscope.profile.model import lifetime_bin
from helpers.preloaded import sigterm_when_ready

MS = 1_000_000


def run(heapscope, build, out, mode, *options, env=None):
    program = build("trk_deferred.c", "-pthread", "-DHEAPSCOPE_WEAK")
    # per-size rows: without the default sampled stacks, which would split a size whose
    # allocations a sample hit into its path's row and the rest (1 run in 3 at 15 KB)
    res = heapscope("record", "-o", out, "--track", "--sample-bytes", "off", *options, "--",
                    program, mode, env=env)
    [path] = sorted(out.glob("heapscope.*.hsp"))
    return read_profile(path), res.stdout


def row(profile, size):
    [r] = [s for s in profile.tracking.stacks if s.size == size]
    return r.life


def test_address_reused_by_another_thread_before_the_death_is_counted(heapscope, build,
                                                                         tmp_path):
    # no thread cache, one arena: the helper's malloc(40) gets the block main freed
    env = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0:glibc.malloc.arena_max=1"}
    p, stdout = run(heapscope, build, tmp_path, "reuse", env=env)
    assert stdout.splitlines()[-1] == "reused"
    life = row(p, 40)
    assert (life.allocs, life.frees, life.live_at_end) == (2, 2, 0)
    # both freed with nothing allocated in between by their thread: x's death is
    # taken from main's ring (its free, before the three 24-B blocks and the 200 ms)
    assert life.temporaries == 2
    assert life.between_hist[0] == 2
    assert sum(life.time_hist[:lifetime_bin(100 * MS)]) == 2
    assert row(p, 24).allocs == 3 and row(p, 24).live_at_end == 3
    # the 8000-B block made the peak, so the 24-B births did not count main's ring first
    assert row(p, 8000).live_at_peak == 1 and row(p, 24).live_at_peak == 0
    assert p.tracking.untracked == 0


def test_idle_thread_deaths_counted_by_the_exit_snapshot(heapscope, build, tmp_path):
    p, _ = run(heapscope, build, tmp_path, "idle")
    life = row(p, 120)
    # the worker waits forever with its five frees not processed: the snapshot counts them
    assert (life.allocs, life.frees, life.live_at_end) == (5, 5, 0)
    # freed in order after all five were allocated: 4, 3, 2, 1, 0 allocations between
    assert life.between_hist[:4] == (1, 1, 2, 1)
    assert life.temporaries == 1
    assert sum(life.time_hist) == 5


def test_region_boundary_counts_the_frees_before_it(heapscope, build, tmp_path):
    p, _ = run(heapscope, build, tmp_path, "idle")
    tl = p.timeline
    assert tl.heap_measure == "requested"
    [begin] = [s for s in tl.samples if (s.kind, s.region) == ("region-begin", "work")]
    [end] = [s for s in tl.samples if (s.kind, s.region) == ("region-end", "work")]
    # ten 300-B blocks allocated and freed inside: nothing of them at the end
    assert end.heap_bytes == begin.heap_bytes
    life = row(p, 300)
    assert (life.allocs, life.frees, life.live_at_end) == (10, 10, 0)


def test_sigterm_snapshot_counts_the_waiting_deaths(build, native, tmp_path):
    """The snapshot a signal handler takes counts the deaths still in the ring: the
    last of 1000 freed 40-B blocks is not a leak (no new heap maximum came after it,
    which would have counted it)."""
    exe = build("trk_deferred.c", "-pthread", "-DHEAPSCOPE_WEAK")
    sigterm_when_ready(native, exe, tmp_path, "wait", HEAPSCOPE_TRACK="1")
    [path] = sorted(tmp_path.glob("heapscope.*.hsp"))
    p = read_profile(path)
    assert p.snapshot_reason == "sigterm" and p.tracking.source == "track"
    assert (row(p, 40).allocs, row(p, 40).frees, row(p, 40).live_at_end) == (1000, 1000, 0)
    assert row(p, 40).temporaries == 1000
    assert (row(p, 77).allocs, row(p, 77).live_at_end) == (1, 1)


def test_peak_with_deaths_waiting_behind_a_reused_address(heapscope, build, tmp_path):
    """A birth that reuses the last freed address counts that death and clears the
    newest ring entry; a later birth that seems to make a new maximum must still count
    the six deaths waiting behind it first."""
    p, _ = run(heapscope, build, tmp_path, "peak")
    assert p.tracking.peak_bytes == 7 * 64
    assert row(p, 64).live_at_peak == 7 and row(p, 300).live_at_peak == 0
    assert (row(p, 64).allocs, row(p, 64).frees) == (8, 8)


def test_signal_snapshots_leave_the_heap_figure_right(heapscope, build, tmp_path):
    """A SIGUSR1 snapshot's handler counts the deaths waiting in the ring; the heap
    figure of the timeline comes back to 0 all the same."""
    p, _ = run(heapscope, build, tmp_path, "usr1")
    life = row(p, 1000)
    assert (life.allocs, life.frees, life.live_at_end) == (15, 15, 0)
    samples = p.timeline.samples
    assert [s.kind for s in samples].count("final") >= 4   # three SIGUSR1 snapshots and the exit
    boundaries = [s for s in samples if s.region == "after"]
    assert len(boundaries) == 2 and all(s.heap_bytes == 0 for s in boundaries)
    assert samples[-1].kind == "final" and samples[-1].heap_bytes == 0


def test_another_threads_free_counts_the_allocations_before_it(heapscope, build, tmp_path):
    """A block freed by another thread that then waits: its death is counted late (at
    that thread's end), after 100 more allocations of the allocating thread; the
    allocations in between are those up to the free: none, a temporary."""
    p, _ = run(heapscope, build, tmp_path, "xfree")
    life = row(p, 40)
    assert (life.allocs, life.frees, life.temporaries) == (1, 1, 1)
    assert life.between_hist[0] == 1
    assert (row(p, 24).allocs, row(p, 24).frees) == (100, 100)


def test_full_table_takes_a_block_that_replaces_a_dead_one(heapscope, build, tmp_path):
    """At the table's bound, a birth at the address of a block whose death still waits
    replaces that block instead of being refused."""
    p, _ = run(heapscope, build, tmp_path, "full", "--track-max-blocks", "10")
    assert p.tracking.untracked == 0
    life = row(p, 48)
    assert (life.allocs, life.frees, life.live_at_end) == (11, 1, 10)
