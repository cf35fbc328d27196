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
        assert len(periodic) >= 10
        assert all(s.rss_bytes > 0 and s.pss_bytes > 0 for s in periodic)
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
    assert len(periodic) >= 300 // (2 * 2)  # nothing dropped while the file was closed
    assert [s.kind for s in child.timeline.samples].count("final") == 1
    # the samples of a closed file's time say "unknown"; the exit's, in the program's
    # thread, opens /proc again and measures
    final = next(s for s in child.timeline.samples if s.kind == "final")
    assert final.rss_bytes > 0
