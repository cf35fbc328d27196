"""The timeline's sampler thread leaves a single-threaded program single-threaded in
glibc's eyes (src/recorder/core/single_thread.c): glibc's malloc then takes no arena
lock, as without the recorder. The program's own first thread clears the flag as it
always does, and the recorder's threads never call the allocator (a spy allocator
placed under the recorder fails the run if they do)."""
import os
import subprocess
from pathlib import Path

from heapscope.profile import read_profile


def flags(stdout):
    return dict(line.split() for line in stdout.splitlines())


def test_sampler_keeps_glibc_single_threaded(heapscope, build, tmp_path):
    program = build("tl_single_thread.c", "-DHEAPSCOPE_WEAK", "-pthread")
    plain = subprocess.run([program, "2"], capture_output=True, text=True, check=True)
    assert flags(plain.stdout) == {"main": "1", "child": "1", "thread": "0"}
    res = heapscope("record", "--timeline-interval", "1ms", "-o", tmp_path, "--", program, "200")
    # as without the recorder: alone at main and in the child, not once a thread ran
    assert flags(res.stdout) == {"main": "1", "child": "1", "thread": "0"}
    profiles = [read_profile(f) for f in sorted(tmp_path.glob("*.hsp"))]
    assert len(profiles) == 2     # the parent's and the child's
    for p in profiles:
        rows = sum(c for (region, _), c in p.size_counts.items() if region == "rows")
        # the parent: 2 x 200 rounds of 1000 blocks; the child 200 rounds
        assert rows in (200_000, 400_000), rows
        assert any(s.kind == "periodic" for s in p.timeline.samples)


def test_recorder_threads_never_call_the_allocator(heapscope, build, native, tmp_path):
    """A spy allocator under the recorder aborts on any call from a thread named
    heapscope-*; a 1 ms timeline flushed every 10 ms, with region boundaries, runs
    the sampler's every path many times."""
    program = build("tl_single_thread.c", "-DHEAPSCOPE_WEAK", "-pthread")
    spy = tmp_path / "libspy.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", spy,
                    Path(__file__).resolve().parents[1] / "programs" / "spy_allocator.c"],
                   check=True)
    out = tmp_path / "out"
    res = heapscope("record", "--timeline-interval", "1ms", "--timeline-heap", "on",
                    "-o", out, "--", program, "300",
                    env={"LD_PRELOAD": str(spy), "HEAPSCOPE_TIMELINE_FLUSH_MS": "10"})
    assert "spy:" not in res.stderr
    assert flags(res.stdout)["main"] == "1"
    for p in [read_profile(f) for f in sorted(out.glob("*.hsp"))]:
        periodic = [s for s in p.timeline.samples if s.kind == "periodic"]
        # (the period stretches to keep the reads at 1% of a CPU: on a loaded machine
        # a read costs more CPU, so fewer than 300 samples; 19 were seen under load)
        assert len(periodic) >= 10
