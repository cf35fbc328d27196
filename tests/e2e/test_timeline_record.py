"""The recorder's timeline: samples at every process-wide region boundary, by
the sampler thread, at every snapshot; written as the run goes, so a SIGKILLed process
keeps its timeline; a forked child has its own; nothing lost when the sample ring fills."""
import os
import signal
import subprocess
import time

import pytest

from heapscope.errors import HeapscopeError
from heapscope.profile import read_profile
from heapscope.profile.timeline import read_timeline

MIB = 1024 * 1024
BOUNDARIES = [("region-begin", "setup"), ("region-end", "setup"),
              ("region-begin", "hold"), ("region-end", "hold"),
              ("region-begin", "outer"), ("region-begin", "outer/inner"),
              ("region-end", "outer/inner"), ("region-end", "outer"),
              ("region-begin", "release"), ("region-end", "release")]


def only(out, exe=None):
    files = sorted(out.glob("*.hsp"))
    profiles = [read_profile(f) for f in files]
    if exe is not None:
        profiles = [p for p in profiles if p.exe == str(exe)]
    assert len(profiles) == 1, files
    return profiles[0]


def boundaries(tl):
    return [s for s in tl.samples if s.kind in ("region-begin", "region-end")]


def test_region_boundaries_periodic_samples_and_heap(heapscope, build, tmp_path):
    program = build("tl_regions.c", "-DHEAPSCOPE_WEAK")
    nap_ms, interval_ms = 200, 20
    heapscope("record", "--timeline-interval", f"{interval_ms}ms", "--timeline-heap", "on",
              "-o", tmp_path, "--", program, nap_ms)
    p = only(tmp_path)
    tl = p.timeline
    assert tl.interval_ns == interval_ms * 1_000_000 and tl.heap_measure == "usable"

    # exactly one sample per boundary, in order, labelled with the region's name
    b = boundaries(tl)
    assert [(s.kind, s.region) for s in b] == BOUNDARIES
    assert [s.label for s in b] == [r.split("/")[-1] for _, r in BOUNDARIES]
    # times strictly increase over the whole timeline; the exit snapshot's sample is last
    times = [s.mono_ns for s in tl.samples]
    assert all(a < c for a, c in zip(times, times[1:]))
    assert tl.samples[-1].kind == "final" and [s.kind for s in tl.samples].count("final") == 1
    # periodic: the program sleeps 4 x nap_ms; at least one sample per two intervals
    periodic = [s for s in tl.samples if s.kind == "periodic"]
    assert len(periodic) >= 4 * nap_ms // (2 * interval_ms)
    assert all(s.rss_bytes > 0 and s.pss_bytes > 0 for s in periodic)
    # boundary samples read RSS only (statm): PSS is "not measured"
    assert all(s.rss_bytes > 0 and s.pss_bytes == -1 for s in b)

    by = {(s.kind, s.region): s for s in b}
    begin, end = by[("region-begin", "hold")], by[("region-end", "hold")]
    assert begin.heap_bytes < MIB                 # only setup's freed block came before
    assert end.heap_bytes >= 10 * MIB             # ten 1 MiB blocks held (usable sizes)
    assert end.heap_bytes < 10 * MIB + 256 * 1024    # usable: a page more per mmap'd block
    assert end.rss_bytes - begin.rss_bytes >= 9 * MIB   # every page touched
    assert by[("region-end", "outer")].heap_bytes == end.heap_bytes   # nothing in between
    assert by[("region-end", "release")].heap_bytes < MIB
    # the periodic samples taken inside "hold" after the blocks were touched
    assert max(s.heap_bytes for s in tl.samples) == end.heap_bytes
    assert all(s.heap_mpi_bytes == 0 for s in tl.samples)    # no MPI here
    assert (tl.calipers_taken, tl.calipers_skipped) == (0, 0)
    # the timeline reader gives the same samples
    assert read_timeline(p.path).timeline.samples == tl.samples


def test_default_timeline_has_no_heap_figure(heapscope, build, tmp_path):
    """Heap in use costs every allocation: off unless asked; RSS/PSS and regions stay."""
    program = build("tl_regions.c", "-DHEAPSCOPE_WEAK")
    heapscope("record", "-o", tmp_path, "--", program, 1)
    tl = only(tmp_path).timeline
    assert tl.interval_ns == 100_000_000 and tl.heap_measure == "none"
    assert [(s.kind, s.region) for s in boundaries(tl)] == BOUNDARIES
    assert all(s.heap_bytes == -1 and s.heap_mpi_bytes == -1 for s in tl.samples)
    assert tl.samples[-1].kind == "final" and tl.samples[-1].pss_bytes > 0


def test_timeline_off(heapscope, build, tmp_path):
    program = build("tl_regions.c", "-DHEAPSCOPE_WEAK")
    heapscope("record", "--timeline-interval", "0", "-o", tmp_path, "--", program, 1)
    p = only(tmp_path)
    assert p.timeline is None
    assert p.size_counts[("hold", 1 << 20)] == 10      # counting is unaffected


def test_sigkilled_process_keeps_its_timeline_up_to_the_last_flush(native, build, tmp_path):
    program = build("tl_killed.c", "-DHEAPSCOPE_WEAK")
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libheapscope.so"),
               HEAPSCOPE_OUTPUT_DIR=str(tmp_path), HEAPSCOPE_TIMELINE_MS="20",
               HEAPSCOPE_TIMELINE_FLUSH_MS="100", HEAPSCOPE_TIMELINE_HEAP="1")
    proc = subprocess.Popen([str(program)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        path = next(iter(tmp_path.glob("*.hsp")))
        # wait (no fixed time: the machine may be slow) until a flush written after
        # "ready" holds a periodic sample that sees the 4 MiB
        deadline = time.monotonic() + 60
        while True:
            tl = read_timeline(path).timeline
            if tl and any(s.kind == "periodic" and s.heap_bytes >= 4 * MIB for s in tl.samples):
                break
            assert time.monotonic() < deadline, "no timeline flush within 60 s"
            time.sleep(0.05)
        time.sleep(0.25)   # past two more flush periods
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL

    with pytest.raises(HeapscopeError, match="no complete snapshot"):
        read_profile(path)
    p = read_timeline(path)
    assert not p.complete and any("no complete snapshot" in w for w in p.warnings)
    assert not any("cut short" in w for w in p.warnings)     # whole chunks only
    assert p.pid == proc.pid and p.exe == str(program)
    tl = p.timeline
    assert [(s.kind, s.region, s.label) for s in boundaries(tl)] == [("region-begin", "work", "work")]
    after = [s for s in tl.samples if s.kind == "periodic" and s.heap_bytes >= 4 * MIB]
    assert len(after) >= 2 and all(s.region == "work" for s in after)
    assert all(s.rss_bytes >= 4 * MIB for s in after)
    assert not any(s.kind == "final" for s in tl.samples)     # never dumped
    times = [s.mono_ns for s in tl.samples]
    assert all(a < c for a, c in zip(times, times[1:]))


def test_forked_child_has_its_own_timeline(heapscope, build, tmp_path):
    program = build("tl_fork.c", "-DHEAPSCOPE_WEAK")
    heapscope("record", "--timeline-interval", "20ms", "--timeline-heap", "on", "-o", tmp_path,
              "--", program, 200)
    profiles = {p.pid: p for p in map(read_profile, tmp_path.glob("*.hsp"))}
    assert len(profiles) == 2
    child = next(p for p in profiles.values() if p.ppid in profiles)
    parent = profiles[child.ppid]
    assert [(s.kind, s.region) for s in boundaries(child.timeline)] == \
        [("region-begin", "parent/child"), ("region-end", "parent/child")]
    assert [(s.kind, s.region) for s in boundaries(parent.timeline)] == \
        [("region-begin", "parent"), ("region-end", "parent")]
    # the child's sampler thread was started again in the child: periodic samples in
    # "parent/child" that see its 2 MiB
    inside = [s for s in child.timeline.samples
              if s.kind == "periodic" and s.region == "parent/child" and s.heap_bytes >= 2 * MIB]
    assert len(inside) >= 200 // (2 * 20) - 1
    assert child.timeline.samples[0].mono_ns < 50_000_000     # its own time base
    assert max(s.heap_bytes for s in parent.timeline.samples) < MIB


def test_more_boundaries_than_the_ring_holds_none_lost(heapscope, build, tmp_path):
    program = build("tl_many.c", "-DHEAPSCOPE_WEAK")
    n = 5000
    heapscope("record", "-o", tmp_path, "--", program, n)
    p = only(tmp_path)
    b = boundaries(p.timeline)
    assert [s.kind for s in b] == ["region-begin", "region-end"] * n
    assert {s.region for s in b} == {"step"}
    assert not any("lost" in w for w in p.warnings)


def test_the_exit_sample_is_the_last_however_often_the_sampler_runs(heapscope, build,
                                                                    tmp_path):
    """The sampler thread, every millisecond, may measure while the process ends: a
    periodic sample measured after the exit's "final" one came last (1-2 runs in 40).
    Once the profile is sealed for the exit, the sampler adds nothing."""
    program = build("tl_exit.c")
    late = []
    for run in range(60):
        out = tmp_path / str(run)
        heapscope("record", "--timeline-interval", "1ms", "--snapshot-interval", "2ms",
                  "-o", out, "--", program, "200000")
        samples = only(out).timeline.samples
        assert sum(s.kind == "periodic" for s in samples) >= 1
        if samples[-1].kind != "final":
            late.append((run, [s.kind for s in samples[-3:]]))
    assert late == []
