"""Profile reader on synthetic files: fields, snapshot choice, truncation, corruption."""
import struct

import pytest

from heapscope.errors import HeapscopeError
from heapscope.profile import load_profiles, read_profile
from heapscope.profile import format as fmt
from helpers.profile_builder import (API, STACK_TYPES, ProfileBuilder, chunk, chunks_of, header,
                                     stack_types_payload)

REGIONS = [(1, 0, "split"), (2, 1, "local"), (3, 0, "post")]


def full_builder(**kw):
    b = ProfileBuilder(pid=1234, ppid=77, rank=3, host="n042", exe="/opt/fem/bin/fem",
                       cmdline=("fem", "-i", "mesh 1.msh"), job_id="job-9",
                       stack_sizes="12,24", stack_regions="local", max_depth=32, unwinder=1, **kw)
    b.snapshot(regions=REGIONS[:1], sizes=[(1, 12, 1)], apis=[(1, API["malloc"], 1)], reason="api")
    b.snapshot(
        regions=REGIONS,
        sizes=[(0, 100, 2), (1, 12, 5), (2, 12, 700), (2, 24, 30), (3, 4096, 1)],
        apis=[(2, API["malloc"], 720), (2, API["calloc"], 10), (2, API["free"], 600),
              (0, API["operator_new"], 2), (1, API["failed"], 1)],
        stacks=[(2, 12, 400, 4800, (0x401010, 0x401200, 0x7f0000001000)),
                (2, 12, 300, 3600, (0x401020, 0x401200))],
        modules=[("/opt/fem/bin/fem", 0, bytes.fromhex("a1b2c3"), [(0x401000, 0x402000)]),
                 ("/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7f0000000000, b"",
                  [(0x7f0000001000, 0x7f0000100000), (0x7f0000200000, 0x7f0000201000)])],
        extra=[(STACK_TYPES, stack_types_payload([(2, 24, 30, 720, (0x401030,)),
                                                  (2, 12, 5, 60, (0x401020, 0x401200))]))],
        reason="sigterm", lost=7, threads=5)
    return b


def test_all_fields(tmp_path):
    p = read_profile(full_builder().write(tmp_path / "a.hsp"))
    assert (p.pid, p.ppid, p.rank, p.host, p.exe, p.job_id) == (1234, 77, 3, "n042", "/opt/fem/bin/fem", "job-9")
    assert p.cmdline == ["fem", "-i", "mesh 1.msh"]
    assert p.settings == dict(stack_sizes="12,24", stack_regions="local", max_depth=32,
                              unwinder="frame-pointers", sample_bytes=0)
    assert p.complete and p.snapshot_seq == 1 and p.snapshot_reason == "sigterm"
    assert {rid: r.path for rid, r in p.regions.items()} == {
        0: "(none)", 1: "split", 2: "split/local", 3: "post"}
    assert p.regions[2].parent == 1 and p.regions[2].name == "local"
    assert p.size_counts == {("(none)", 100): 2, ("split", 12): 5, ("split/local", 12): 700,
                             ("split/local", 24): 30, ("post", 4096): 1}
    assert p.api_counts == {("split/local", "malloc"): 720, ("split/local", "calloc"): 10,
                            ("split/local", "free"): 600, ("(none)", "operator_new"): 2,
                            ("split", "failed"): 1}
    # The two STACK_TYPES chunks are added: the repeated type sums its counts.
    assert [(s.region, s.size, s.count, s.bytes, s.frames) for s in p.stack_types] == [
        ("split/local", 12, 400, 4800, (0x401010, 0x401200, 0x7f0000001000)),
        ("split/local", 12, 305, 3660, (0x401020, 0x401200)),
        ("split/local", 24, 30, 720, (0x401030,)),
    ]
    assert [m.path for m in p.modules] == ["/opt/fem/bin/fem", "/usr/lib/x86_64-linux-gnu/libc.so.6"]
    assert p.modules[0].build_id == "a1b2c3" and p.modules[1].build_id == ""
    assert p.modules[1].bias == 0x7f0000000000
    assert p.modules[1].ranges == ((0x7f0000001000, 0x7f0000100000), (0x7f0000200000, 0x7f0000201000))
    assert p.lost_stacks == 7 and p.total_threads == 5
    assert any("7 allocations" in w and "lost" in w for w in p.warnings)
    assert p.label == "rank 3 (pid 1234)"


def test_last_complete_snapshot_wins(tmp_path):
    b = ProfileBuilder()
    b.snapshot(sizes=[(0, 8, 1)])
    b.snapshot(sizes=[(0, 8, 10), (0, 16, 3)], reason="api")
    b.snapshot(sizes=[(0, 8, 20), (0, 16, 6)], reason="exit")
    p = read_profile(b.write(tmp_path / "x.hsp"))
    assert p.snapshot_seq == 2 and p.snapshot_reason == "exit"
    assert p.size_counts == {("(none)", 8): 20, ("(none)", 16): 6}
    assert p.complete and p.warnings == []


def test_truncated_anywhere_in_last_snapshot_uses_previous(tmp_path):
    b = ProfileBuilder()
    b.snapshot(sizes=[(0, 8, 10)], reason="api")
    good_end = len(b.data())
    b.snapshot(sizes=[(0, 8, 99)], stacks=[(0, 8, 99, 792, (1, 2))])
    data = b.data()
    # Every cut point from just after snapshot 0 to one byte before the end.
    for cut in range(good_end + 1, len(data)):
        p = read_profile(b.write(tmp_path / "t.hsp", data[:cut]))
        assert p.size_counts == {("(none)", 8): 10}, cut
        assert p.snapshot_seq == 0 and not p.complete
        assert len(p.warnings) == 1 and f"at byte" in p.warnings[0] and "using snapshot 0" in p.warnings[0]
    # Cut inside SNAPSHOT_BEGIN (24 + 16 bytes): snapshot 1 never began.
    begin = fmt.CHUNK_HEADER_SIZE + 16
    p = read_profile(b.write(tmp_path / "t.hsp", data[:good_end + 20]))
    assert p.warnings == [f"file cut short at byte {good_end} (a chunk being written); using snapshot 0"]
    # Cut inside the MODULES chunk that follows it.
    p = read_profile(b.write(tmp_path / "t.hsp", data[:good_end + begin + 5]))
    assert p.warnings == [f"last snapshot (seq 1) cut short at byte {good_end + begin}; using snapshot 0"]


def test_snapshot_without_end_at_eof(tmp_path):
    b = ProfileBuilder()
    b.snapshot(sizes=[(0, 8, 10)])
    b.snapshot(sizes=[(0, 8, 50)], end=False)
    data = b.data()
    p = read_profile(b.write(tmp_path / "t.hsp"))
    assert p.size_counts == {("(none)", 8): 10}
    assert p.warnings == [f"last snapshot (seq 1) cut short at byte {len(data)}; using snapshot 0"]


def error_of(path) -> str:
    with pytest.raises(HeapscopeError) as info:
        read_profile(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def test_no_complete_snapshot(tmp_path):
    b = ProfileBuilder()
    b.snapshot(sizes=[(0, 8, 10)])
    data = b.data()
    assert "no complete snapshot" in error_of(b.write(tmp_path / "t.hsp", data[:-5]))
    only_process = ProfileBuilder()
    assert "no complete snapshot" in error_of(only_process.write(tmp_path / "p.hsp"))


def test_truncated_header(tmp_path):
    data = ProfileBuilder().data()
    for cut in (3, 8, 20, 31, 47):
        assert "too short" in error_of(ProfileBuilder().write(tmp_path / "h.hsp", data[:cut]))


def test_empty_and_bad_magic(tmp_path):
    (tmp_path / "e.hsp").write_bytes(b"")    # the recorder could not write even the header
    assert "empty file: incomplete" in error_of(tmp_path / "e.hsp")
    (tmp_path / "m.hsp").write_bytes(b"#!/bin/sh\necho not a profile\n" * 3)
    assert "not a heapscope profile (bad magic)" in error_of(tmp_path / "m.hsp")


def test_wrong_version(tmp_path):
    b = ProfileBuilder(version=3)
    b.snapshot(sizes=[(0, 8, 1)])
    assert "unsupported profile format version 3 (this heapscope reads versions 1 to 2)" in \
        error_of(b.write(tmp_path / "v.hsp"))


def test_crc_mismatch_names_chunk_and_offset(tmp_path):
    b = ProfileBuilder()
    b.snapshot(sizes=[(0, 8, 10), (0, 9, 11)])
    data = bytearray(b.data())
    # Flip one byte of the SIZE_COUNTS chunk's payload: no snapshot before it.
    offset = next(o for ctype, o, _ in chunks_of(bytes(data)) if ctype == 6)
    data[offset + fmt.CHUNK_HEADER_SIZE + 8] ^= 0x40
    message = error_of(b.write(tmp_path / "c.hsp", bytes(data)))
    assert message.endswith(f"corrupt chunk at byte {offset} (type 6, SIZE_COUNTS): crc mismatch; "
                            f"no complete snapshot before it")


def test_malformed_payload_with_good_crc(tmp_path):
    b = ProfileBuilder()
    b.snapshot(sizes=[(0, 8, 1)])
    # A SIZE_COUNTS chunk claiming 1000 rows but holding none, with a correct crc.
    b.snapshot(extra=[(6, struct.pack("<I", 1000))])
    message = error_of(b.write(tmp_path / "m.hsp"))
    assert "malformed SIZE_COUNTS chunk at byte" in message


def test_unknown_chunks_skipped_and_kept(tmp_path):
    b = ProfileBuilder()
    b.raw(chunk(200, b"file-level"))
    b.snapshot(sizes=[(0, 8, 3)], extra=[(90, b"timeline-1"), (90, b"timeline-2"), (77, b"")])
    p = read_profile(b.write(tmp_path / "u.hsp"))
    assert p.size_counts == {("(none)", 8): 3}
    assert p.extra_chunks == {90: [b"timeline-1", b"timeline-2"], 77: [b""]}
    assert p.file_chunks == {200: [b"file-level"]}
    assert p.complete and p.warnings == []


def test_header_size_larger_than_32_is_skipped(tmp_path):
    b = ProfileBuilder()
    b.snapshot(sizes=[(0, 8, 3)])
    data = b.data()
    longer = header(header_size=fmt.HEADER_SIZE + 8) + b"\0" * 8 + data[fmt.HEADER_SIZE:]
    assert read_profile(b.write(tmp_path / "l.hsp", longer)).size_counts == {("(none)", 8): 3}


def test_missing_file_and_directory(tmp_path):
    assert "no such file" in error_of(tmp_path / "nope.hsp")
    with pytest.raises(HeapscopeError, match="is a directory"):
        read_profile(tmp_path)


def test_load_profiles_files_and_directories(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    for pid in (30, 10, 20):
        b = ProfileBuilder(pid=pid)
        b.snapshot(sizes=[(0, pid, 1)])
        b.write(d / f"host.{pid}.hsp")
    (d / "notes.txt").write_text("ignored: not *.hsp")
    single = ProfileBuilder(pid=99)
    single.snapshot()
    f = single.write(tmp_path / "single.hsp")
    profiles = load_profiles([str(d), str(f), str(d / "host.20.hsp")])
    assert [p.pid for p in profiles] == [10, 20, 30, 99]   # host.20 named twice, read once
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(HeapscopeError, match="holds no profile"):
        load_profiles([str(empty)])
    with pytest.raises(HeapscopeError, match="bad magic"):
        load_profiles([str(d / "notes.txt")])
    with pytest.raises(HeapscopeError, match="no profile given"):
        load_profiles([])


def test_mutated_payloads_never_crash(tmp_path):
    """Payload bytes changed and the crc recomputed (a writer bug, not disk corruption):
    the reader either reads the file or rejects it with one line, never anything else."""
    import random
    b = full_builder()
    data = b.data()
    head = fmt.CHUNK_HEADER_SIZE
    chunks = [(offset, ctype, len(payload)) for ctype, offset, payload in chunks_of(data)]
    rng = random.Random(1234)
    outcomes = {"read": 0, "rejected": 0}
    for trial in range(150):
        buf = bytearray(data)
        start, ctype, length = rng.choice([c for c in chunks if c[2] > 0])
        for _ in range(rng.randint(1, 4)):
            pos = start + head + rng.randrange(length)
            buf[pos] = rng.choice([0, 0xFF, rng.randrange(256)])
        buf[start:start + head + length] = chunk(ctype, bytes(buf[start + head:start + head + length]))
        path = tmp_path / "f.hsp"
        path.write_bytes(bytes(buf))
        try:
            read_profile(path)
            outcomes["read"] += 1
        except HeapscopeError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(str(path))
            outcomes["rejected"] += 1
    assert outcomes["read"] > 0 and outcomes["rejected"] > 0
