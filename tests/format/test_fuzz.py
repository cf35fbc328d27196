"""Fuzzing the reader (in CI: about 2,500 mutants, well under 30 s): truncations every 3
bytes, random bit flips, and crafted chunks (types changed to other known types, lengths
and row counts changed, every crc redone: what a buggy writer or a crafted file does).
Each mutant is either rejected with a one-line error (exit status 2), or read as a
correct prefix: every figure read equals the original's in the snapshot read, the
timeline samples read are the first ones of the original's, and a mutant read as less
than the whole original is flagged (not complete, with a warning), unless it ends on a
chunk boundary of the original (the file of a process that ended there). A few mutants also go
through `heapscope report` to check the exit status and the single line."""
import struct

import pytest

from heapscope.profile import format as fmt
from heapscope.profile import read_profile
from helpers.mutants import framing_mutants, outcomes, read_or_error, with_u32
from helpers.profile_builder import API, ProfileBuilder, chunks_of, payload

FIGURES = ("pid", "ppid", "rank", "host", "exe", "cmdline", "job_id", "settings", "start_real_ns",
           "snapshot_seq", "snapshot_reason", "snapshot_mono_ns", "modules", "regions", "size_counts",
           "api_counts", "failed_allocs", "stack_types", "lost_stacks", "total_threads")
HEAD = fmt.CHUNK_HEADER_SIZE


def timeline(n0, count):
    samples = [dict(mono_ns=n0 + 10 * k, kind=fmt.SAMPLE_PERIODIC, region=0, label=fmt.NO_LABEL,
                    heap_bytes=-1, heap_component_bytes=-1, rss_bytes=1000 + k, pss_bytes=900 + k)
               for k in range(count)]
    return dict(interval_ns=10, caliper_ns=-1, heap_measure=fmt.HEAP_MEASURE_NONE, calipers_taken=0,
                calipers_skipped=0, mpi_rss_delta=0, mpi_pss_delta=0, samples_lost=0, labels=(),
                samples=samples)


def original() -> ProfileBuilder:
    b = ProfileBuilder(pid=77, host="n1", cmdline=("fem", "-n", "4"), stack_sizes="12,24")
    failed = [dict(region=1, api=API["calloc"], size=2 ** 64 - 1, calls=1, size_known=1)]
    for seq in range(3):
        b.add("TIMELINE", **timeline(100 * seq, 3))
        b.snapshot(regions=[(1, 0, "solve"), (2, 1, "local")],
                   sizes=[(1, 12, 10 + seq), (2, 24, 5 * seq + 1), (0, 4096, seq + 1)],
                   apis=[(1, API["malloc"], 11 + 6 * seq), (2, API["free"], seq + 3)],
                   stacks=[(2, 24, 5 * seq + 1, 24 * (5 * seq + 1), (0x401000 + seq, 0x402000))],
                   modules=[("/opt/fem", 0, b"\x01\x02", [(0x400000, 0x500000)])],
                   extra=[("FAILED_ALLOCS", payload("FAILED_ALLOCS", rows=failed))] if seq else (),
                   reason="api" if seq < 2 else "exit", threads=seq + 1)
    return b


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The original's bytes, its figures per snapshot seq, and its timeline samples."""
    d = tmp_path_factory.mktemp("ref")
    b = original()
    data = b.data()
    ends = [o + HEAD + len(p) for t, o, p in chunks_of(data) if t == fmt.CHUNK_SNAPSHOT_END]
    per_seq = {}
    for end in ends:
        p = read_profile(b.write(d / "prefix.hsp", data[:end]))
        per_seq[p.snapshot_seq] = {name: getattr(p, name) for name in FIGURES}
    whole = read_profile(b.write(d / "whole.hsp", data))
    assert whole.complete and not whole.warnings and len(per_seq) == 3
    return data, per_seq, whole.timeline.samples


def check(path, data, reference) -> str:
    """'error' or 'prefix' (or 'whole' for the original's very bytes); fails otherwise."""
    original_data, per_seq, samples = reference
    p = read_or_error(read_profile, path, data)
    if p is None:
        return "error"
    got = {name: getattr(p, name) for name in FIGURES}
    assert got == per_seq[p.snapshot_seq], "figures differ from the original's snapshot"
    read = p.timeline.samples if p.timeline else []
    assert read == samples[:len(read)], "timeline samples are not a prefix of the original's"
    if p.snapshot_seq == max(per_seq) and read == samples:
        return "whole"       # all of the original read (damage, if any, in what is not read)
    if original_data.startswith(data) and len(data) in boundaries(original_data):
        return "boundary"    # whole chunks: the file of a process that ended there
    assert not p.complete and p.warnings, "less than the original read without a flag"
    return "prefix"


def boundaries(data: bytes):
    return {o + HEAD + len(p) for _t, o, p in chunks_of(data)}


def mutants(data: bytes):
    yield from framing_mutants(data, sorted(fmt.CHUNK_NAMES), seed=20261123, flips=800)
    for ctype, at, body in chunks_of(data):
        layout = fmt.CODECS[ctype].fields if ctype in fmt.CODECS else ()
        if layout and layout[0].name == "count" and len(body) >= 4:   # row counts changed
            (n,) = struct.unpack_from("<I", body)
            for value in {0, n - 1, n + 1, 2 * n + 1, 2 ** 32 - 1} - {n}:
                if value >= 0:
                    yield "count", with_u32(data, at, len(body), 0, value)


def test_every_mutant_is_an_error_or_a_flagged_prefix(tmp_path, reference):
    seen = outcomes(mutants(reference[0]), lambda path, mutant: check(path, mutant, reference),
                    tmp_path / "m.hsp")
    # each kind of damage was met both ways, so the test sees what it claims to
    for kind in ("cut", "flip", "type", "length", "count"):
        assert seen.get((kind, "error"), 0) > 0, (kind, seen)
    for kind in ("cut", "flip", "length"):
        assert seen.get((kind, "prefix"), 0) > 0, (kind, seen)
    assert sum(seen.values()) > 2000


def test_cli_exit_status_of_mutants(heapscope, tmp_path, reference):
    data = reference[0]
    flipped = bytearray(data)
    flipped[fmt.HEADER_SIZE + 3] ^= 0x10                   # PROCESS: no snapshot readable
    bad = tmp_path / "bad.hsp"
    bad.write_bytes(bytes(flipped))
    res = heapscope("report", bad, check=False)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "corrupt chunk at byte 48 (type" in res.stderr
    last_end = [o for t, o, _p in chunks_of(data) if t == fmt.CHUNK_SNAPSHOT_END][-1]
    flipped = bytearray(data)
    flipped[last_end + HEAD + 9] ^= 0x01                   # the last snapshot's end
    prefix = tmp_path / "prefix.hsp"
    prefix.write_bytes(bytes(flipped))
    res = heapscope("report", prefix)
    assert "snapshot  1 (api)" in res.stdout and f"corrupt chunk at byte {last_end}" in res.stdout
