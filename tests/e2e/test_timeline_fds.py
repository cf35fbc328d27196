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
