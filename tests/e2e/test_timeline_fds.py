"""The recorder's threads never take a descriptor number the program is about to use.
An MPI launcher's proxy closes 0 and dup2s a pipe onto it in a fork child; an open() of
/proc/self/smaps_rollup by the timeline's sampler in between took 0, and MPICH's
`mpirun` under `heapscope record` failed with "dup2 error (Device or resource busy)"."""


def test_the_sampler_leaves_a_closed_descriptor_free(heapscope, build, tmp_path):
    program = build("tl_fd_zero.c")
    # a sample every millisecond, each an smaps_rollup read, parent and fork child
    res = heapscope("record", "--timeline-interval", "1ms", "-o", tmp_path, "--", program,
                    "400", check=False)
    assert res.stdout.splitlines() == ["parent taken 0 dup2 ok", "child taken 0 dup2 ok"], \
        res.stdout + res.stderr
    assert res.returncode == 0
    assert len(list(tmp_path.glob("*.hsp"))) == 2


def test_the_timeline_still_measures_rss_and_pss(heapscope, build, tmp_path):
    """The same reads, from the descriptors opened at the start (and again in the child)."""
    from heapscope.profile import read_profile
    program = build("tl_fd_zero.c")
    heapscope("record", "--timeline-interval", "5ms", "-o", tmp_path, "--", program, "200",
              check=False)
    profiles = [read_profile(f) for f in sorted(tmp_path.glob("*.hsp"))]
    assert len(profiles) == 2
    for p in profiles:
        periodic = [s for s in p.timeline.samples if s.kind == "periodic"]
        assert len(periodic) >= 10, [(s.mono_ns, s.kind) for s in p.timeline.samples]
        assert all(s.rss_bytes > 0 and s.pss_bytes > 0 for s in periodic), \
            [(s.mono_ns, s.rss_bytes, s.pss_bytes) for s in periodic]
    # the child's own figures, not its parent's: different process ids in the files
    assert len({p.pid for p in profiles}) == 2


def test_a_child_that_closes_every_descriptor_keeps_its_timeline(heapscope, build, tmp_path):
    """The child closes the recorder's file too: the sampler's flushes (every 10 ms) must
    not open it again from the recorder's thread; the child's exit does, and writes the
    samples kept meanwhile."""
    from heapscope.profile import read_profile
    program = build("tl_fd_zero.c")
    res = heapscope("record", "--timeline-interval", "2ms", "-o", tmp_path, "--", program,
                    "300", "closeall", tmp_path, check=False,
                    env={"HEAPSCOPE_TIMELINE_FLUSH_MS": "10"})
    # (inotify: the profile's directory saw no open while the child ran)
    assert res.stdout.splitlines() == ["parent taken 0 dup2 ok",
                                       "child taken 0 dup2 ok profile opened 0"], \
        res.stdout + res.stderr
    assert res.returncode == 0
    profiles = [read_profile(f) for f in sorted(tmp_path.glob("*.hsp"))]
    assert len(profiles) == 2
    pids = {p.pid for p in profiles}
    child = next(p for p in profiles if p.ppid in pids)
    periodic = [s for s in child.timeline.samples if s.kind == "periodic"]
    # nothing dropped while the file was closed: none counted lost, and the samples span
    # the child's 300 ms (dropping them would leave those of before its first closing).
    # How many the sampler took is the scheduler's: 69 of 150 in a loaded fresh root.
    assert not [w for w in child.warnings if "timeline sample" in w], child.warnings
    assert periodic[-1].mono_ns - periodic[0].mono_ns >= 200_000_000, \
        [s.mono_ns for s in periodic]
    assert len(periodic) >= 300 // (2 * 8)
    assert [s.kind for s in child.timeline.samples].count("final") == 1
    # the samples of a closed file's time say "unknown"; the exit's, in the program's
    # thread, opens /proc again and measures
    final = next(s for s in child.timeline.samples if s.kind == "final")
    assert final.rss_bytes > 0


def traced_events(tmp_path):
    """Each profile of tmp_path: (allocations in its trace, allocations counted, whether
    a write failed)."""
    from heapscope.profile import read_profile
    rows = []
    for f in sorted(tmp_path.glob("*.hsp")):
        p = read_profile(f)
        rows.append((sum(s.life.allocs for s in p.tracking.stacks), sum(p.size_counts.values()),
                     not p.complete))
    return rows


def test_the_trace_writer_waits_for_a_closed_profile(heapscope, build, tmp_path):
    """`record --trace`: the child's full buffers meet a file it closed; the writer
    thread (the recorder's own) keeps them instead of opening the file again, and the
    child's exit writes them: every allocation is in the trace."""
    program = build("tl_fd_zero.c")
    res = heapscope("record", "--trace", "-o", tmp_path, "--", program, "400", "closeall",
                    tmp_path, check=False)
    assert res.stdout.splitlines() == ["parent taken 0 dup2 ok",
                                       "child taken 0 dup2 ok profile opened 0"], \
        res.stdout + res.stderr
    assert res.returncode == 0 and "incomplete" not in res.stderr
    rows = traced_events(tmp_path)
    assert len(rows) == 2
    for traced, counted, failed in rows:
        assert traced == counted > 1000 and not failed


def test_a_trace_whose_buffers_all_fill_while_the_profile_is_closed(heapscope, build, tmp_path):
    """Every buffer full and the writer thread waiting: the program's own thread writes
    the oldest buffer (and may open the file to do so) instead of waiting forever."""
    program = build("tl_fd_zero.c")
    res = heapscope("record", "--trace", "-o", tmp_path, "--", program, "1500", "closeall",
                    tmp_path, "busy", check=False, timeout=120)
    assert res.stdout.splitlines()[0] == "parent taken 0 dup2 ok", res.stdout + res.stderr
    assert res.stdout.splitlines()[1].startswith("child taken 0 dup2 ok profile opened ")
    assert res.returncode == 0 and "incomplete" not in res.stderr
    rows = traced_events(tmp_path)
    assert len(rows) == 2
    # 32 buffers of 256 KiB hold about 1.2 M events at 7 bytes each; the busy child
    # allocates 2,000,000 times at least, however slowly it runs (1.39 M in 1.5 s once,
    # in a loaded fresh root, when it stopped at its time; exactly 2,000,000 when it
    # reaches its time first), far more than the buffers hold
    assert rows[1][1] >= 2_000_000 or rows[0][1] >= 2_000_000, rows
    for traced, counted, failed in rows:
        assert traced == counted and not failed
