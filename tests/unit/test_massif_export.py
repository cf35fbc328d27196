"""Massif export of tracking data and timelines built here: the tree merges stack types by
frames, the snapshots follow the samples, and Valgrind's ms_print reads the file.
(tests/e2e/test_peak_and_leaks.py exports a recorded program.)"""
import re
import subprocess

import pytest

from heapscope.errors import HeapscopeError
from heapscope.export.massif import to_massif
from heapscope.profile.model import (LIFETIME_BINS, Lifetimes, Profile, Sample, Timeline, TrackedStack,
                                     Tracking)

Z = (0,) * LIFETIME_BINS


def held(peak_bytes, end_bytes=0, blocks=1):
    return Lifetimes(blocks, 0, 0, Z, Z, blocks, peak_bytes, 1 if end_bytes else 0, end_bytes)


def tracked_profile():
    # Two paths share the caller 0x30 and the root 0x40; a third path is separate;
    # size 8 was tracked without stacks; 100 bytes at the peak were untracked.
    stacks = [TrackedStack("(none)", 1000, (0x10, 0x30, 0x40), held(3000, 1000, 3)),
              TrackedStack("(none)", 500, (0x20, 0x30, 0x40), held(1500)),
              TrackedStack("(none)", 200, (0x50, 0x40), held(400, 400, 2)),
              TrackedStack("(none)", 8, (), held(80, 0, 10))]
    t = Tracking(peak_bytes=5080, peak_mono_ns=7_000_000, end_bytes=1400, stacks=stacks,
                 extra={1000: (3, 48), 500: (1, 12), 200: (2, 16), 8: (10, 80)})
    return Profile(path="t.hsp", cmdline=["./app", "-n", "3"], snapshot_mono_ns=9_000_000, tracking=t)


def tree_lines(text, kind):
    lines = text.splitlines()
    i = lines.index(f"heap_tree={kind}") + 1
    out = []
    while i < len(lines) and not lines[i].startswith("#"):
        out.append(lines[i])
        i += 1
    return out


def test_peak_tree_merges_paths_by_frames():
    text = to_massif(tracked_profile())
    assert text.startswith("desc: heapscope export of t.hsp (tracking; pid 0)\ncmd: ./app -n 3\ntime_unit: ms\n")
    tree = [re.sub(r"\?\? \(in \?\)", "f", line) for line in tree_lines(text, "peak")]
    assert tree[0] == "n5: 5080 (heap allocation functions) malloc/new/new[], --alloc-fns, etc."
    assert tree[1:] == [" n1: 3000 0x10: f", "  n1: 3000 0x30: f", "   n0: 3000 0x40: f",
                        " n1: 1500 0x20: f", "  n1: 1500 0x30: f", "   n0: 1500 0x40: f",
                        " n1: 400 0x50: f", "  n0: 400 0x40: f",
                        " n0: 100 0x0: [untracked blocks]",
                        " n0: 80 0x0: [stack not recorded] (size 8)"]


def test_snapshots_peak_then_exit_with_extra_estimate():
    text = to_massif(tracked_profile())
    snaps = re.findall(r"snapshot=(\d+)\n#-+\ntime=(\d+)\nmem_heap_B=(\d+)\nmem_heap_extra_B=(\d+)\n"
                       r"mem_stacks_B=0\nheap_tree=(\w+)", text)
    # extra: 3 x 16 + 1 x 12 + 2 x 8 + 10 x 8 at the peak; 1 x 16 + 1 x 8 at the end
    assert snaps == [("0", "0", "0", "0", "empty"), ("1", "7", "5080", "156", "peak"),
                     ("2", "9", "1400", "24", "detailed")]
    assert tree_lines(text, "detailed")[0].startswith("n2: 1400 ")


def test_timeline_only_and_neither():
    samples = [Sample(ns, "periodic", "(none)", "", heap, 0, 1 << 20, 1 << 19)
               for ns, heap in ((1_000_000, 100), (2_500_000, 900), (4_000_000, 300))]
    p = Profile(path="t.hsp", exe="/bin/app", timeline=Timeline(interval_ns=1_000_000, samples=samples))
    text = to_massif(p)
    assert re.findall(r"time=(\d+)\nmem_heap_B=(\d+)", text) == [("0", "0"), ("1", "100"), ("2", "900"), ("4", "300")]
    assert "heap_tree=peak" not in text
    with pytest.raises(HeapscopeError, match="neither tracking data nor a timeline"):
        to_massif(Profile(path="x.hsp"))
    no_heap = [Sample(1_000_000, "periodic", "(none)", "", -1, -1, 1 << 20, 1 << 19)]
    with pytest.raises(HeapscopeError, match="timeline did not sample the heap.*--timeline-heap on"):
        to_massif(Profile(path="x.hsp", timeline=Timeline(heap_measure="none", samples=no_heap)))


def test_ms_print_reads_it(tmp_path):
    out = tmp_path / "massif.out"
    out.write_text(to_massif(tracked_profile()))
    res = subprocess.run(["ms_print", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "Command:            ./app -n 3" in res.stdout
    assert re.search(r"^\s+1\s+7\s+5,236\s+5,080\s+156\s+0$", res.stdout, re.M)   # the peak row
    assert "57.30% (3,000B) 0x10:" in res.stdout   # of heap + extra
