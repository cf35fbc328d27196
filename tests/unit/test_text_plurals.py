"""Counts in text output agree with their noun: "1 sample", "1 thread", "1 stack trace type,
1 allocation, 1 byte", "1 rank on 1 host", never "1 samples" or "thread(s)". On
tests/programs/rep_usable.c asked for one block of 1 byte (and a short timeline, job and
diff built to have exactly one of each)."""
import struct

import pytest

from helpers.profile_builder import ProfileBuilder, chunk

TIMELINE_SAMPLES = 20   # heapscope.profile.timeline; checked against the C header elsewhere


@pytest.fixture(scope="module")
def one_byte(build, heapscope, tmp_path_factory):
    out = tmp_path_factory.mktemp("one") / "prof"
    heapscope("record", "-o", out, "--sizes", "1", "--", build("rep_usable.c"), "1")
    return out


def test_one_block_of_one_byte(one_byte, heapscope, tmp_path):
    stacks = heapscope("stacks", one_byte, "--size", "1").stdout
    assert ", 1 thread\n" in stacks and "thread(s)" not in stacks
    assert "Stack trace types for size 1 in region (none): 1 type, 1 allocation (1 byte)" in stacks
    assert "Stack trace type 1/1: 1 occurrence, 1 byte" in stacks
    graph = heapscope("callgraph", one_byte, "--size", "1", "-o", tmp_path / "cg").stdout.splitlines()
    assert graph[0] == "Call graph of size 1: 1 stack trace type, 1 allocation, 1 byte"
    functions, edges = graph[1].rstrip(".").split(", ")
    assert functions.endswith(" functions") and edges.endswith(" call edges")   # main, libc, _start
    res = heapscope("export", one_byte, "--format", "collapsed", "--size", "1", "-o", tmp_path / "c")
    assert res.stderr.strip().endswith(": 1 stack trace type, 1 allocation, 1 byte")
    assert (tmp_path / "c").read_text().endswith(" 1\n")
    report = heapscope("report", one_byte, "--size", "1", "--top", "0").stdout
    assert "(1 of 2 sizes, by size)" in report and ", 1 thread\n" in report


def test_one_size_of_one_kind(one_byte, heapscope, tmp_path):
    """A profile whose only allocation is the 1-byte block: one size, one allocation."""
    b = ProfileBuilder(stack_sizes="1")
    b.snapshot(sizes=[(0, 1, 1)], threads=1)
    path = b.write(tmp_path / "one.hsp")
    report = heapscope("report", path, "--top", "0").stdout
    assert "(1 of 1 size, by size)" in report
    assert "  (none): 1 allocation, 1 byte" in report


def timeline_chunk(samples):
    """A TIMELINE_SAMPLES payload (layout: heapscope.profile.timeline) of (mono_ns, kind) rows."""
    head = struct.pack("<QqII QQqqQ", 100_000_000, 0, 2, 0, 1, 0, 0, 0, 0)   # heap not measured
    rows = b"".join(struct.pack("<QIIIIqqqq", mono, kind, 0, 0xFFFFFFFF, 0, -1, -1, 2 << 20, -1)
                    for mono, kind in samples)
    return chunk(TIMELINE_SAMPLES, head + struct.pack("<I", 0) + struct.pack("<II", len(samples), 0) + rows)


def test_timeline_of_one_sample(heapscope, tmp_path):
    """A process that ends before the sampler thread's first sample has only the final one."""
    b = ProfileBuilder(exe="/usr/bin/true", cmdline=("true",))
    b.raw(timeline_chunk([(900_000, 5)]))
    b.snapshot(threads=1)
    text = heapscope("timeline", b.write(tmp_path / "t.hsp")).stdout
    assert "  1 sample over 0.001 s (every 100 ms): 1 final" in text and "1 samples" not in text
    two = ProfileBuilder(exe="/usr/bin/true", cmdline=("true",))
    two.raw(timeline_chunk([(0, 0), (900_000, 5)]))
    two.snapshot(threads=1)
    assert "  2 samples over 0.001 s" in heapscope("timeline", two.write(tmp_path / "t2.hsp")).stdout


def test_job_of_one_rank_on_one_host(heapscope, tmp_path):
    d = tmp_path / "job"
    d.mkdir()
    b = ProfileBuilder(pid=77, rank=0, job_id="j1", host="node01")
    b.snapshot(regions=[(1, 0, "solve")], sizes=[(1, 24, 10)])
    b.write(d / "heapscope.j1.r0.node01.77.hsp")
    other = ProfileBuilder(pid=76, exe="/usr/bin/mpirun", host="node01")
    other.snapshot(sizes=[(0, 8, 1)])
    other.write(d / "heapscope.node01.76.hsp")
    text = heapscope("report", d, "--by", "rank").stdout
    assert text.startswith("heapscope job report: job j1, 1 rank on 1 host (node01)")
    assert "  other     1 process that is not a rank, left out: mpirun pid 76" in text


def test_diff_of_one_process_each(one_byte, heapscope):
    text = heapscope("diff", one_byte, one_byte).stdout
    assert text.splitlines()[0] == f"A: {one_byte} (1 process)   B: {one_byte} (1 process)"
    assert "No change: every size in every region has the same allocation count in A and B (2 rows)." in text


def test_job_table_says_one_more_rank(heapscope, tmp_path):
    d = tmp_path / "job2"
    d.mkdir()
    for rank in (0, 1):
        b = ProfileBuilder(pid=80 + rank, rank=rank, job_id="j2", host="node01")
        b.snapshot(sizes=[(0, 24, 10 + rank)])
        b.write(d / f"heapscope.j2.r{rank}.node01.{80 + rank}.hsp")
    text = heapscope("report", d, "--ranks", "1").stdout
    assert "  ... 1 more rank (--ranks 0 shows all; JSON and CSV have all)" in text
    assert text.startswith("heapscope job report: job j2, 2 ranks on 1 host (node01)")

